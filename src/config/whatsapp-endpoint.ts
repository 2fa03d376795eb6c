import ipaddr from 'ipaddr.js';

/**
 * Where the Baileys driver finds WhatsApp. Unset: WhatsApp itself, trusted through the certificate
 * root Baileys ships. Set: a WhatsApp simulator (the project's `simulator/`), whose own noise root and
 * media certificate the node trusts instead. A node accepts this only for a loopback or private
 * address, so a production node can never be pointed at a fake WhatsApp by accident.
 */
export interface WhatsAppEndpointConfig {
  /** WHATSAPP_WS_URL: the simulator's chat socket, e.g. `ws://127.0.0.1:5222/ws/chat`. */
  wsUrl: string;
  /** WHATSAPP_CERT_ROOT: the Curve25519 public key that signs the simulator's noise certificates. */
  certRoot: Buffer;
  /** WHATSAPP_MEDIA_CA: the PEM certificate of the simulator's HTTPS media endpoint. */
  mediaCa: string;
}

/** The address ranges a simulator may live on. */
const INTERNAL_RANGES = new Set(['loopback', 'private', 'uniqueLocal', 'linkLocal', 'carrierGradeNat']);

function isInternalHost(host: string): boolean {
  const bare = host.replace(/^\[|\]$/g, '');
  if (bare === 'localhost') return true;
  if (!ipaddr.isValid(bare)) return false;
  const addr = ipaddr.process(bare);
  return INTERNAL_RANGES.has(addr.range());
}

/** Validates the three variables together; a refusal is one line naming the variable. */
export function parseWhatsAppEndpoint(
  values: { wsUrl: string | undefined; certRoot: string | undefined; mediaCa: string | undefined; driver: string },
  fail: (message: string) => never,
): WhatsAppEndpointConfig | undefined {
  const { wsUrl, certRoot, mediaCa } = values;
  if (wsUrl === undefined) {
    if (certRoot !== undefined) fail('WHATSAPP_CERT_ROOT is only accepted with WHATSAPP_WS_URL (a simulator)');
    if (mediaCa !== undefined) fail('WHATSAPP_MEDIA_CA is only accepted with WHATSAPP_WS_URL (a simulator)');
    return undefined;
  }
  let url: URL;
  try {
    url = new URL(wsUrl);
  } catch {
    return fail(`WHATSAPP_WS_URL must be a ws:// or wss:// URL, got "${wsUrl}"`);
  }
  if (url.protocol !== 'ws:' && url.protocol !== 'wss:') {
    fail(`WHATSAPP_WS_URL must be a ws:// or wss:// URL, got "${wsUrl}"`);
  }
  if (!isInternalHost(url.hostname)) {
    fail(`WHATSAPP_WS_URL must point at a loopback or private address (a WhatsApp simulator), got "${url.hostname}"`);
  }
  if (values.driver !== 'baileys') fail('WHATSAPP_WS_URL needs MSGNET_DRIVER=baileys');
  if (certRoot === undefined || !/^[0-9a-fA-F]{64}$/.test(certRoot)) {
    fail("WHATSAPP_CERT_ROOT must be the simulator's root key as 64 hex characters (GET /node-env of the simulator)");
  }
  if (mediaCa === undefined || !mediaCa.includes('-----BEGIN CERTIFICATE-----')) {
    fail("WHATSAPP_MEDIA_CA must be the PEM certificate of the simulator's media endpoint (GET /node-env)");
  }
  return { wsUrl, certRoot: Buffer.from(certRoot, 'hex'), mediaCa };
}
