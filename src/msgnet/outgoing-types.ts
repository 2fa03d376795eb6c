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
}
