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
  'chats.read': { payload: { chatJid: string; messageIds?: string[] }; result: { messageIds: string[] } };
  'chats.archive': { payload: { chatJid: string; archive: boolean }; result: ChatState };
  'chats.pin': { payload: { chatJid: string; pin: boolean }; result: ChatState };
  'chats.mute': { payload: { chatJid: string; until: number | null }; result: ChatState };
  'chats.block': { payload: { jid: string; block: boolean }; result: ChatState };
  /** Clears the chat on the device and its messages from the history. */
  'chats.clear': { payload: { chatJid: string }; result: { deletedMessages: number } };
  'chats.check': { payload: { numbers: string[] }; result: NumberCheck[] };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ChatCallMap {}
}
