import { ValidationError } from '../errors.js';

/**
 * The one rule for the addresses a client gives (spec: "a bare phone number, digits with country code, or
 * a full JID"): a phone number is digits with the country code, an optional leading `+`, and the spaces,
 * dashes and brackets people write between digit groups; a JID is `<digits>@s.whatsapp.net`,
 * `<digits>@lid`, or a group's `<digits>@g.us` / `<digits>-<digits>@g.us`. Nothing else passes: no leading
 * dash, no empty or dash-only user part.
 */
const PHONE = /^\+?\d+(?:[ ()-]+\d+)*$/;
const USER_JID = /^\d{6,20}@s\.whatsapp\.net$/;
const LID_JID = /^\d{6,25}@lid$/;
const GROUP_JID = /^\d{5,25}(?:-\d{5,25})?@g\.us$/;

/** The JID of a phone number or JID as a client sends it, or undefined when it is neither. */
export function parseAddress(raw: string): string | undefined {
  const value = raw.trim();
  if (value.includes('@')) {
    return USER_JID.test(value) || LID_JID.test(value) || GROUP_JID.test(value) ? value : undefined;
  }
  if (!PHONE.test(value)) return undefined;
  const digits = value.replace(/\D/g, '');
  return digits.length >= 6 && digits.length <= 20 ? `${digits}@s.whatsapp.net` : undefined;
}

/** `parseAddress`, or a 400 naming the field. */
export function requireAddress(raw: string, field = 'number'): string {
  const jid = parseAddress(raw);
  if (jid === undefined) {
    throw new ValidationError(`Invalid ${field}: expected digits with the country code (an optional +) or a JID`);
  }
  return jid;
}

export function isGroupAddress(jid: string): boolean {
  return jid.endsWith('@g.us');
}
