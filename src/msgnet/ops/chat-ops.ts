import type { AddressBookEntry } from './address-book.js';

/** A chat's state on the phone, as the chat operations set it. */
export interface ChatFlags {
  archived: boolean;
  pinned: boolean;
  /** Unix milliseconds until which the chat is muted; null when it is not (a far date mutes "forever"). */
  mutedUntil: number | null;
}

export interface NumberCheck {
  /** As the caller gave it. */
  number: string;
  exists: boolean;
  jid: string | null;
}

/** A chat's newest message, which WhatsApp's archive and clear actions name (from the history). */
export interface LastMessage {
  id: string;
  fromMe: boolean;
  /** Its author in a group, when not us. */
  participant?: string;
  /** Unix milliseconds. */
  timestamp: number;
}

/** Chat operations of the linked number (presence and read receipts are on the session itself). */
export interface ChatOps {
  archive(chatJid: string, archive: boolean, last?: LastMessage): Promise<void>;
  pin(chatJid: string, pin: boolean): Promise<void>;
  /** `until` in Unix milliseconds, or null to unmute. */
  mute(chatJid: string, until: number | null): Promise<void>;
  block(jid: string, block: boolean): Promise<void>;
  /** Deletes the chat's messages on this device only. */
  clear(chatJid: string, last?: LastMessage): Promise<void>;
  /** Which numbers have an account. */
  check(numbers: string[]): Promise<NumberCheck[]>;
  /** Marks the chat unread on the phone (WhatsApp's "mark as unread"). */
  markUnread(chatJid: string, last?: LastMessage): Promise<void>;
  /** Deletes one message on this device only (the others keep it). */
  deleteForMe(chatJid: string, message: LastMessage, deleteMedia: boolean): Promise<void>;
  /** Stars (favourites) or unstars a message. */
  star(chatJid: string, message: { id: string; fromMe: boolean }, star: boolean): Promise<void>;
  /** The address book synced from the phone (a local read: works while disconnected). */
  contacts(): Promise<AddressBookEntry[]>;
}
