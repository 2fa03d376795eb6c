import { Curve, proto } from '@whiskeysockets/baileys';
import type { KeyPair } from '@whiskeysockets/baileys';

/** WhatsApp's clients check the intermediate certificate's issuer serial against this value. */
const ROOT_SERIAL = 0;
const TEN_YEARS_S = 10 * 365 * 24 * 3600;

/**
 * The simulator's own noise certificate authority: a root key pair (whose public key a node is
 * given as WHATSAPP_CERT_ROOT in place of WhatsApp's), an intermediate signed by it, and a leaf
 * for the server's static key signed by the intermediate. Minted anew by every simulator.
 */
export interface CertAuthority {
  /** The root public key a node must trust, hex. */
  rootPublicKeyHex: string;
  /** The server's static noise key pair, certified by the leaf. */
  serverStatic: KeyPair;
  /** The encoded `CertChain` sent in the server hello. */
  chain: Buffer;
}

export function mintCertAuthority(nowSeconds = Math.floor(Date.now() / 1000)): CertAuthority {
  const root = Curve.generateKeyPair();
  const intermediate = Curve.generateKeyPair();
  const serverStatic = Curve.generateKeyPair();
  const intermediateDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 1,
    issuerSerial: ROOT_SERIAL,
    key: intermediate.public,
    notBefore: nowSeconds - 3600,
    notAfter: nowSeconds + TEN_YEARS_S,
  }).finish();
  const leafDetails = proto.CertChain.NoiseCertificate.Details.encode({
    serial: 2,
    issuerSerial: 1,
    key: serverStatic.public,
    notBefore: nowSeconds - 3600,
    notAfter: nowSeconds + TEN_YEARS_S,
  }).finish();
  const chain = proto.CertChain.encode({
    intermediate: { details: intermediateDetails, signature: Curve.sign(root.private, intermediateDetails) },
    leaf: { details: leafDetails, signature: Curve.sign(intermediate.private, leafDetails) },
  }).finish();
  return { rootPublicKeyHex: Buffer.from(root.public).toString('hex'), serverStatic, chain: Buffer.from(chain) };
}
