import type { AddressBookEntry } from '../msgnet/ops/address-book.js';
import type { NumberCheck } from '../msgnet/ops/chat-ops.js';

/** A chat's state as the chat list shows it, kept by the owner under CHATS_NAMESPACE. */
export interface ChatState {
  archived: boolean;
  pinned: boolean;
  /** Unix milliseconds; -1 for "always"; null when not muted. */
  mutedUntil: number | null;
  blocked: boolean;
}

export const NO_CHAT_STATE: ChatState = { archived: false, pinned: false, mutedUntil: null, blocked: false };

/** The chat operations' calls (chat-handlers.ts). */
export interface ChatCallMap {
  /** Marks the given messages read, or every received message of the chat not read yet. */
  'chats.read': {
    /** `sender`: the author of the named messages the history does not hold (needed in a group). */
    payload: { chatJid: string; messageIds?: string[]; sender?: string };
    result: { messageIds: string[] };
  };
  'chats.archive': { payload: { chatJid: string; archive: boolean }; result: ChatState };
  'chats.pin': { payload: { chatJid: string; pin: boolean }; result: ChatState };
  'chats.mute': { payload: { chatJid: string; until: number | null }; result: ChatState };
  'chats.block': { payload: { jid: string; block: boolean }; result: ChatState };
  /** Clears the chat on the device and its messages from the history. */
  'chats.clear': { payload: { chatJid: string }; result: { deletedMessages: number } };
  'chats.check': { payload: { numbers: string[] }; result: NumberCheck[] };
  /** Marks the chat unread on the phone. */
  'chats.markUnread': { payload: { chatJid: string }; result: { unread: true } };
  /** Deletes one message on this device only, and from the history. */
  'chats.deleteForMe': {
    payload: { chatJid: string; messageId: string; fromMe: boolean; participant?: string; timestamp: number };
    result: { deleted: true };
  };
  /** The address book synced from the phone (works while disconnected); `addresses`: only those people. */
  'chats.contacts': { payload: { addresses?: string[] }; result: AddressBookEntry[] };
  /** Stars (favourites) or unstars a message. */
  'chats.star': {
    payload: { chatJid: string; messageId: string; fromMe: boolean; star: boolean };
    result: { starred: boolean };
  };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ChatCallMap {}
}
