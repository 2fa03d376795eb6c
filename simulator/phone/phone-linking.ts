import { randomBytes } from 'node:crypto';
import {
  Curve,
  aesDecryptCTR,
  aesDecryptGCM,
  aesEncryptCTR,
  derivePairingCodeKey,
  hkdf,
} from '@whiskeysockets/baileys';
import type { Device } from '../server/directory.js';
import type { WaServer } from '../server/wa-server.js';
import { SERVER_JID, unixNow } from '../server/stanzas.js';
import type { Phone } from './phone.js';

/** How long a code link waits for the companion's half of the exchange. */
const CODE_FINISH_TIMEOUT_MS = 20_000;

export class LinkError extends Error {}

/**
 * The phone scans a QR (`https://wa.me/settings/linked_devices#ref,noiseKey,identityKey,advSecret,platform`):
 * the companion showing it becomes a linked device of the phone's account.
 */
export function scanQr(phone: Phone, server: WaServer, qr: string): Device {
  const conn = server.pairing.connectionForQr(qr);
  if (!conn) throw new LinkError('no companion is showing that QR (expired or already used)');
  const [, noiseB64, , advB64] = (qr.includes('#') ? qr.slice(qr.indexOf('#') + 1) : qr).split(',');
  if (!noiseB64 || !advB64) throw new LinkError('not a WhatsApp linking QR');
  if (!conn.clientStatic?.equals(Buffer.from(noiseB64, 'base64'))) {
    throw new LinkError("the QR's noise key is not the key of the connection that shows it");
  }
  return server.pairing.link(phone.account, conn, Buffer.from(advB64, 'base64'), (m) => phone.sign(m));
}

/**
 * The phone types the 8-character code a companion shows: the two exchange ephemeral keys wrapped
 * with the code, the companion answers with its key bundle, and both derive the ADV secret. A wrong
 * code makes the bundle undecryptable, and the link fails as WhatsApp's does.
 */
export async function linkByCode(phone: Phone, server: WaServer, code: string): Promise<Device> {
  const number = phone.account.number;
  const request = server.pairing.codeRequest(number);
  if (!request) throw new LinkError(`no companion asked for a pairing code for ${number}`);
  const normalized = code.replace(/[\s-]/g, '').toUpperCase();
  const wrapped = request.wrappedEphemeral;
  const companionEphemeral = aesDecryptCTR(
    wrapped.subarray(48, 80),
    await derivePairingCodeKey(normalized, wrapped.subarray(0, 32)),
    wrapped.subarray(32, 48),
  );
  const primary = Curve.generateKeyPair();
  const salt = randomBytes(32);
  const iv = randomBytes(16);
  const wrappedPrimary = Buffer.concat([
    salt,
    iv,
    aesEncryptCTR(primary.public, await derivePairingCodeKey(normalized, salt), iv),
  ]);
  request.conn.send({
    tag: 'notification',
    attrs: {
      id: randomBytes(8).toString('hex').toUpperCase(),
      from: SERVER_JID,
      type: 'link_code_companion_reg',
      t: unixNow(),
    },
    content: [
      {
        tag: 'link_code_companion_reg',
        attrs: { stage: 'primary_hello' },
        content: [
          { tag: 'link_code_pairing_ref', attrs: {}, content: Buffer.from(request.ref) },
          { tag: 'primary_identity_pub', attrs: {}, content: phone.accountKey },
          { tag: 'link_code_pairing_wrapped_primary_ephemeral_pub', attrs: {}, content: wrappedPrimary },
        ],
      },
    ],
  });
  let timer: NodeJS.Timeout | undefined;
  const finish = await Promise.race([
    request.finish,
    new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new LinkError('the companion did not finish the code exchange')),
        CODE_FINISH_TIMEOUT_MS,
      );
    }),
  ]).finally(() => clearTimeout(timer));
  server.pairing.forgetCode(number);
  const companionShared = Curve.sharedKey(primary.private, companionEphemeral);
  const bundle = finish.wrappedBundle;
  let plain: Buffer;
  try {
    const key = hkdf(companionShared, 32, {
      salt: bundle.subarray(0, 32),
      info: 'link_code_pairing_key_bundle_encryption_key',
    });
    plain = aesDecryptGCM(bundle.subarray(44), key, bundle.subarray(32, 44), Buffer.alloc(0));
  } catch {
    throw new LinkError('wrong pairing code');
  }
  const companionIdentity = plain.subarray(0, 32);
  if (!companionIdentity.equals(finish.companionIdentity)) throw new LinkError('the key bundle names another identity');
  const identityShared = Curve.sharedKey(phone.creds.signedIdentityKey.private, companionIdentity);
  const advSecret = Buffer.from(
    hkdf(Buffer.concat([companionShared, identityShared, plain.subarray(64, 96)]), 32, { info: 'adv_secret' }),
  );
  return server.pairing.link(phone.account, request.conn, advSecret, (m) => phone.sign(m));
}
