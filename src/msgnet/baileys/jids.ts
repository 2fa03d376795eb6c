import { jidNormalizedUser } from '@whiskeysockets/baileys';
import type { Party } from '../msgnet-events.js';

export const STATUS_JID = 'status@broadcast';
const USER_SERVER = '@s.whatsapp.net';

export type ChatType = 'private' | 'group' | 'newsletter' | 'status';

/** A bare number (digits, maybe with `+` or spaces) or a full JID, as the API accepts, to a JID. */
export function toJid(numberOrJid: string): string {
  if (numberOrJid.includes('@')) return numberOrJid;
  return `${digitsOf(numberOrJid)}${USER_SERVER}`;
}

export function digitsOf(value: string): string {
  return value.replace(/\D/g, '');
}

/** `5511999:12@s.whatsapp.net` (a device address) to `5511999@s.whatsapp.net`. */
export function userJid(jid: string): string {
  return jidNormalizedUser(jid) || jid;
}

export function isGroupJid(jid: string): boolean {
  return jid.endsWith('@g.us');
}

export function isLidJid(jid: string | undefined): boolean {
  return !!jid && (jid.endsWith('@lid') || jid.endsWith('@hosted.lid'));
}

export function isPnJid(jid: string | undefined): boolean {
  return !!jid && (jid.endsWith(USER_SERVER) || jid.endsWith('@hosted'));
}

export function chatTypeOf(jid: string): ChatType {
  if (jid === STATUS_JID) return 'status';
  if (isGroupJid(jid)) return 'group';
  if (jid.endsWith('@newsletter')) return 'newsletter';
  return 'private';
}

/**
 * A person as we report them: `jid` is the phone-number address when Baileys knows it, `lid` the LID. In v7
 * a key may carry either one as the main address and the other as its `…Alt`.
 */
export function partyOf(jid: string, alt: string | undefined, name?: string | null): Party {
  const main = isLidJid(jid) || isPnJid(jid) ? userJid(jid) : jid;
  const other = alt ? userJid(alt) : undefined;
  let party: Party;
  if (isLidJid(main)) party = other && !isLidJid(other) ? { jid: other, lid: main } : { jid: main, lid: main };
  else party = other && isLidJid(other) ? { jid: main, lid: other } : { jid: main };
  if (name) party.name = name;
  return party;
}
