import { ValidationError } from '../errors.js';
import { isGroupAddress, parseAddress } from './jid.js';

// The addresses the channel and community operations take (ops/channel-ops.ts), checked by the edge and the drivers.

/** WhatsApp names channels `<digits>@newsletter`. */
const CHANNEL_JID = /^\d{5,25}@newsletter$/;

/** `raw` as a channel JID, or a 400 naming the field. */
export function requireChannelJid(raw: string, field = 'jid'): string {
  const jid = raw.trim();
  if (!CHANNEL_JID.test(jid)) {
    throw new ValidationError(`Invalid ${field}: expected a channel JID (<digits>@newsletter)`);
  }
  return jid;
}

/** `raw` as a group JID (a community is a group too), or a 400 naming the field. */
export function requireGroupJid(raw: string, field: string): string {
  const jid = parseAddress(raw);
  if (jid === undefined || !isGroupAddress(jid)) {
    throw new ValidationError(`Invalid ${field}: expected a group JID (<digits>@g.us)`);
  }
  return jid;
}
