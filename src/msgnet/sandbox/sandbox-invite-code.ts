import { randomInt } from 'node:crypto';

const LETTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz';
/** The secret part's length: letters only, so that the group's digits after it are found again. */
const SECRET_LENGTH = 12;
const CODE = new RegExp(`^[A-Za-z]{${SECRET_LENGTH}}(\\d{5,25}(?:-\\d{5,25})?)$`);

/**
 * A new invite code of a sandbox group: twelve random letters, then the group's own digits, so that a
 * joiner knows on which group's JID to ask (WhatsApp's server knows it; the simulated network has none).
 */
export function newInviteCode(groupJid: string): string {
  const secret = Array.from({ length: SECRET_LENGTH }, () => LETTERS[randomInt(LETTERS.length)]).join('');
  return `${secret}${groupJid.replace(/@g\.us$/, '')}`;
}

/** The group an invite code names, or undefined for a code the sandbox never made. */
export function groupOfInviteCode(code: string): string | undefined {
  const match = CODE.exec(code);
  return match ? `${match[1]}@g.us` : undefined;
}
