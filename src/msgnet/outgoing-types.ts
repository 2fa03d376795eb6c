import type { MediaKind } from './msgnet-events.js';

// What a send hands the driver and gets back, apart from msgnet-driver.ts so the ops interfaces can use them.

export interface OutgoingMedia {
  kind: MediaKind;
  data: Buffer;
  mimetype: string;
  fileName?: string;
  caption?: string;
  /** Audio as a voice note. */
  ptt?: boolean;
  seconds?: number;
  /** A voice note's 64 peaks of 0 to 100. */
  waveform?: Uint8Array;
}

export interface SentMessage {
  messageId: string;
  /** Unix milliseconds. */
  timestamp: number;
  /** The network acknowledged the send before answering (the sandbox does; WhatsApp acks it later). */
  acknowledged?: true;
}

/** The message a reply quotes, as the history kept it (the network needs its author and text). */
export interface QuotedMessage {
  id: string;
  chatJid: string;
  fromMe: boolean;
  senderJid: string;
  text: string;
}

/** The card a text shows for its first link, built by the edge. */
export interface LinkPreview {
  /** The link as the text writes it. */
  url: string;
  title: string;
  description?: string;
  /** A small JPEG of the page's image, base64. */
  thumbnail?: string;
}

export interface SendOptions {
  replyTo?: QuotedMessage;
  /**
   * The message id to send under, chosen before the send and recorded as intent, so that a new owner
   * finishing an interrupted send repeats the id: the network keeps one message per id (the sandbox
   * answers the first send again; WhatsApp clients keep one message per id).
   */
  messageId?: string;
  /** JIDs to mention: each is notified (the text shows them as `@number`). */
  mentions?: string[];
  /** A text's preview card. */
  linkPreview?: LinkPreview;
}
