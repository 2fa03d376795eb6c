import { ValidationError } from '../errors.js';

/** A channel's address: WhatsApp names channels `<digits>@newsletter`. */
const CHANNEL_JID = /^\d{5,25}@newsletter$/;

export function isChannelJid(jid: string): boolean {
  return CHANNEL_JID.test(jid);
}

/** `raw` as a channel JID, or a 400 naming the field. */
export function requireChannelJid(raw: string, field = 'jid'): string {
  const jid = raw.trim();
  if (!CHANNEL_JID.test(jid)) {
    throw new ValidationError(`Invalid ${field}: expected a channel JID (<digits>@newsletter)`);
  }
  return jid;
}
