import { randomBytes } from 'node:crypto';

/**
 * What a phone has besides the simulator's other phones: an address book, groups and chat history that
 * exist only on the phone (numbers nobody on this simulator answers). It gives a new companion a first
 * sync of realistic size, as a phone that has been in use does.
 */
export interface AddressBookSize {
  /** Saved contacts. @default 0 */
  contacts?: number;
  /** Groups the phone is in. @default 0 */
  groups?: number;
  /** Messages of recent history per chat. @default 0 */
  messagesPerChat?: number;
}

export interface BookContact {
  jid: string;
  lid: string;
  name: string;
}

export interface BookGroup {
  jid: string;
  subject: string;
}

export interface BookMessage {
  chat: string;
  id: string;
  fromMe: boolean;
  participant?: string;
  text: string;
  t: number;
}

export class AddressBook {
  readonly contacts: BookContact[] = [];
  readonly groups: BookGroup[] = [];
  readonly messages: BookMessage[] = [];

  constructor(owner: string, size: AddressBookSize = {}) {
    const base = Number(owner.slice(-6)) * 1000;
    for (let i = 0; i < (size.contacts ?? 0); i++) {
      const number = `55${String(base + i).padStart(11, '0')}`.slice(0, 13);
      this.contacts.push({
        jid: `${number}@s.whatsapp.net`,
        lid: `${9_000_000_000_000 + base + i}@lid`,
        name: `Friend ${i + 1}`,
      });
    }
    for (let i = 0; i < (size.groups ?? 0); i++) {
      this.groups.push({ jid: `${owner}-${1_700_000_000 + i}@g.us`, subject: `Group ${i + 1}` });
    }
    const perChat = size.messagesPerChat ?? 0;
    const now = Math.floor(Date.now() / 1000);
    const chats = [...this.contacts.map((c) => c.jid), ...this.groups.map((g) => g.jid)];
    for (const chat of chats) {
      for (let m = 0; m < perChat; m++) {
        const fromMe = m % 3 === 0;
        const isGroup = chat.endsWith('@g.us');
        this.messages.push({
          chat,
          id: `3EB0${randomBytes(8).toString('hex').toUpperCase()}`,
          fromMe,
          ...(isGroup && !fromMe
            ? { participant: this.contacts[m % Math.max(1, this.contacts.length)]?.jid ?? chat }
            : {}),
          text: `history message ${m + 1} of ${chat.split('@')[0]}`,
          t: now - (perChat - m) * 600,
        });
      }
    }
  }
}
