import type {
  ChatPresence,
  LinkPreview,
  Location,
  MessageContent,
  QuotedMessage,
  SentMessage,
} from '../msgnet/msgnet-driver.js';
import type { WireMedia } from './wire-media.js';

/** What every send takes beside its content. */
export interface SendCommon {
  to: string;
  /** The message a reply quotes. */
  replyTo?: QuotedMessage;
  /** The client's label, echoed as `message.source` in the message's outgoing `message.exchange`. */
  source?: string;
}

/** A kind of `msgnet.send` as it crosses the wire: media as base64. */
export type WireContent = MessageContent<WireMedia>;

/** The message calls (message-handlers.ts): sends, deletions, chat presence, a received file again. */
export interface MessageCallMap {
  'msgnet.sendText': {
    /** `mentionAll`: every member of the group `to` is mentioned too (resolved on the owner). */
    payload: SendCommon & { text: string; mentions?: string[]; mentionAll?: boolean; linkPreview?: LinkPreview };
    result: SentMessage;
  };
  'msgnet.sendLocation': { payload: SendCommon & { location: Location }; result: SentMessage };
  /** `mentions`/`mentionAll` as the text send takes them (not for stickers). */
  'msgnet.sendMedia': {
    payload: SendCommon & { media: WireMedia; mentions?: string[]; mentionAll?: boolean };
    result: SentMessage;
  };
  /** Contacts, interactive messages, polls, events, reactions, edits and forwards. */
  'msgnet.send': { payload: SendCommon & { content: WireContent }; result: SentMessage };
  /** Revokes a message for everyone (a status too) and drops it from the history. */
  'msgnet.deleteMessage': {
    payload: { chatJid: string; messageId: string; fromMe: boolean };
    result: { deleted: true };
  };
  /** `sent: false` when the driver cannot show chat presence. */
  'msgnet.presence': { payload: { to: string; state: ChatPresence }; result: { sent: boolean } };
  /** A received file of the history, downloaded again from the session while it still holds the message. */
  'media.download': { payload: { messageId: string }; result: { base64: string; mimetype: string; fileName?: string } };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends MessageCallMap {}
}
