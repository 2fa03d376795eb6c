import { createPrivateKey, createSign, generateKeyPairSync, randomBytes } from 'node:crypto';

/**
 * A self-signed X.509 certificate for the simulator's HTTPS media endpoint (ECDSA P-256, SHA-256),
 * valid for 127.0.0.1, ::1 and localhost. Node can verify certificates but not make them, and this is
 * the one certificate we need: a few DER structures rather than a dependency.
 */
export interface SelfSignedCert {
  /** PEM of the certificate: what a node is given to trust (WHATSAPP_MEDIA_CA). */
  cert: string;
  key: string;
}

function der(tag: number, content: Buffer): Buffer {
  const len = content.length;
  let header: Buffer;
  if (len < 0x80) header = Buffer.from([tag, len]);
  else if (len < 0x100) header = Buffer.from([tag, 0x81, len]);
  else header = Buffer.from([tag, 0x82, len >> 8, len & 0xff]);
  return Buffer.concat([header, content]);
}

const seq = (...parts: Buffer[]): Buffer => der(0x30, Buffer.concat(parts));
const set = (...parts: Buffer[]): Buffer => der(0x31, Buffer.concat(parts));

function oid(dotted: string): Buffer {
  const parts = dotted.split('.').map(Number);
  const bytes = [40 * parts[0]! + parts[1]!];
  for (const p of parts.slice(2)) {
    const chunk = [p & 0x7f];
    for (let v = p >> 7; v > 0; v >>= 7) chunk.unshift((v & 0x7f) | 0x80);
    bytes.push(...chunk);
  }
  return der(0x06, Buffer.from(bytes));
}

function utcTime(date: Date): Buffer {
  const s = date.toISOString().replace(/[-:T]/g, '').slice(2, 14) + 'Z';
  return der(0x17, Buffer.from(s, 'ascii'));
}

function name(commonName: string): Buffer {
  return seq(set(seq(oid('2.5.4.3'), der(0x0c, Buffer.from(commonName, 'utf8')))));
}

/**
 * A serial number from random bytes, as a positive DER INTEGER in its shortest form: a leading 0x00 before a
 * byte under 0x80 is refused by OpenSSL ("illegal padding"), which one certificate in about 300 met when
 * only the sign bit was cleared.
 */
export function certificateSerial(random: Buffer): Buffer {
  const serial = Buffer.from(random);
  serial[0] = (serial[0]! & 0x3f) | 0x40;
  return serial;
}

export function makeSelfSignedCert(commonName = 'whatsapp-simulator', days = 3650): SelfSignedCert {
  const { publicKey, privateKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
  const spki = publicKey.export({ type: 'spki', format: 'der' });
  const ecdsaWithSha256 = seq(oid('1.2.840.10045.4.3.2'));
  const serial = certificateSerial(randomBytes(16));
  const now = new Date(Date.now() - 3600_000);
  const until = new Date(now.getTime() + days * 86_400_000);
  const altNames = seq(
    der(0x82, Buffer.from('localhost')),
    der(0x87, Buffer.from([127, 0, 0, 1])),
    der(0x87, Buffer.from([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])),
  );
  const extensions = der(
    0xa3,
    seq(
      seq(oid('2.5.29.17'), der(0x04, altNames)),
      // basicConstraints CA:TRUE, so that a client may take the certificate itself as its trust root.
      seq(oid('2.5.29.19'), der(0x01, Buffer.from([0xff])), der(0x04, seq(der(0x01, Buffer.from([0xff]))))),
    ),
  );
  const tbs = seq(
    der(0xa0, der(0x02, Buffer.from([2]))),
    der(0x02, serial),
    ecdsaWithSha256,
    name(commonName),
    seq(utcTime(now), utcTime(until)),
    name(commonName),
    spki,
    extensions,
  );
  const signature = createSign('sha256').update(tbs).sign(privateKey);
  const cert = seq(tbs, ecdsaWithSha256, der(0x03, Buffer.concat([Buffer.from([0]), signature])));
  const pem = `-----BEGIN CERTIFICATE-----\n${cert
    .toString('base64')
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END CERTIFICATE-----\n`;
  const keyPem = createPrivateKey(privateKey.export({ type: 'pkcs8', format: 'pem' })).export({
    type: 'pkcs8',
    format: 'pem',
  }) as string;
  return { cert: pem, key: keyPem };
}
