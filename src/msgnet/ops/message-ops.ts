import type { MessageContent } from '../message-content.js';
import type { Location, NormalizedMessage } from '../msgnet-events.js';
import type { OutgoingMedia, SendOptions, SentMessage } from '../outgoing-types.js';

/** What a chat shows of us: typing, recording a voice note, neither, or just online. */
export type ChatPresence = 'composing' | 'recording' | 'paused' | 'available';

/** A received message's media, as downloaded by its owner node. */
export interface ReceivedMedia {
  data: Buffer;
  mimetype: string;
  fileName?: string;
}

/** Messages of the linked number: sends, deletions, read receipts, chat presence, received files. */
export interface MessageOps {
  sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage>;
  sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage>;
  sendLocation(to: string, location: Location, options?: SendOptions): Promise<SentMessage>;
  /** Contacts, interactive messages, polls, events, call cards, reactions, edits and forwards. */
  sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage>;
  /** Revokes a message for everyone (a status too). */
  deleteMessage(chatJid: string, messageId: string, fromMe: boolean): Promise<void>;
  markRead(chatJid: string, messageIds: string[], participant?: string): Promise<void>;
  /** Shows "typing…" (`composing`) or "recording…" in a chat, or stops it (`paused`). */
  sendChatPresence(to: string, state: ChatPresence): Promise<void>;
  /**
   * The bytes of a received message's media, while the session still holds that message (recent messages
   * of this activation only), through the instance's proxy. `signal` aborts the download (a deadline).
   * @throws NotFoundError when it does not, PayloadTooLargeError past `maxBytes`.
   */
  downloadMedia(message: NormalizedMessage, maxBytes: number, signal?: AbortSignal): Promise<ReceivedMedia>;
}
