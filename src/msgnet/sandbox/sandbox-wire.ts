import type { Button, ChatPresence, EventCard, Location, MediaKind, PixPayment } from '../msgnet-driver.js';

/**
 * What travels between sandbox numbers on their channels (through Redis in cluster mode), and what the
 * outbox records. Plain JSON.
 */
export type SandboxWire =
  | {
      t: 'msg';
      id: string;
      from: string;
      pushName?: string;
      timestamp: number;
      text: string;
      groupJid?: string;
      /** `base64`: the file itself, when the contact sends one (a received media's bytes). */
      media?: {
        kind: MediaKind;
        mimetype: string;
        fileName?: string;
        caption?: string;
        size?: number;
        base64?: string;
      };
      buttonReplyId?: string;
      mentions?: string[];
      location?: Location;
    }
  | { t: 'receipt'; from: string; status: 'delivered' | 'read'; ids: string[]; timestamp: number }
  | {
      t: 'call';
      from: string;
      callId: string;
      status: 'offer' | 'rejected' | 'terminated';
      isVideo: boolean;
      timestamp: number;
    }
  | { t: 'ping' };

/** What the instance sent, as GET /api/sandbox/outbox shows it. */
export interface OutboxEntry {
  messageId: string;
  to: string;
  type:
    | 'text'
    | 'media'
    | 'location'
    | 'buttons'
    | 'payment'
    | 'event'
    | 'status'
    | 'call_offer'
    | 'call_reject'
    | 'delete'
    | 'presence';
  /** Unix milliseconds. */
  timestamp: number;
  text?: string;
  media?: OutboxMedia;
  /** The quoted message of a reply. */
  replyTo?: string;
  /** The JIDs a text mentions. */
  mentions?: string[];
  location?: Location;
  /** Chat presence (`composing` before a delayed message). */
  presence?: ChatPresence;
  buttons?: Button[];
  payment?: PixPayment;
  event?: EventCard;
  status?: { type: string; backgroundColor?: string; font?: number };
  call?: { durationSeconds?: number; callId: string };
  deletedMessageId?: string;
}

/** Media as the outbox shows it: its description, never its bytes. */
export interface OutboxMedia {
  kind: MediaKind;
  mimetype: string;
  fileName?: string;
  caption?: string;
  size: number;
  /** Audio: duration, voice note flag and waveform, as the network would carry them. */
  seconds?: number;
  ptt?: boolean;
  waveform?: number[];
}

/** A group the sandbox phone is in (seeded through POST /api/sandbox/group). */
export interface SandboxGroup {
  jid: string;
  subject: string;
  description: string;
  creatorJid: string;
  participants: { jid: string; admin: 'admin' | 'superadmin' | null }[];
}
