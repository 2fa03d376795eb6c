import type {
  Button,
  ChatPresence,
  ContactCard,
  EventCard,
  EventDetails,
  FormMessage,
  ListSection,
  Location,
  MediaKind,
  PixPayment,
} from '../msgnet-driver.js';
import type { MessageDetails, MessageType } from '../msgnet-events.js';
import type { GroupSettings } from '../ops/group-ops.js';

/** The domains whose phones talk to each other beyond messages, receipts and calls. */
export type SandboxDomain = 'groups' | 'chats' | 'channels' | 'communities';

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
      /** A channel post: followers listening on the channel's JID receive it from the channel. */
      newsletterJid?: string;
      /** `base64`: the file itself, when the contact sends one (a received media's bytes). */
      media?: {
        kind: MediaKind;
        mimetype: string;
        fileName?: string;
        caption?: string;
        size?: number;
        base64?: string;
        /** An audio recorded as a voice note; a video recorded as a round video note. */
        ptt?: boolean;
        ptv?: boolean;
      };
      buttonReplyId?: string;
      mentions?: string[];
      location?: Location;
      /** What the message is when it is none of text, media and location (its content in `details`). */
      kind?: MessageType;
      details?: MessageDetails;
    }
  | { t: 'receipt'; from: string; status: 'delivered' | 'read'; ids: string[]; timestamp: number }
  | {
      t: 'call';
      from: string;
      callId: string;
      status: 'offer' | 'accepted' | 'rejected' | 'terminated';
      isVideo: boolean;
      timestamp: number;
    }
  | { t: 'ping' }
  /** A domain's own message between phones (a group change, a join request, a channel post…). */
  | { t: 'ops'; domain: SandboxDomain; from: string; payload: unknown };

/** What the instance sent, as GET /api/sandbox/outbox shows it. */
export interface OutboxEntry {
  messageId: string;
  to: string;
  type:
    | 'text'
    | 'media'
    | 'location'
    | 'contact'
    | 'buttons'
    | 'list'
    | 'carousel'
    | 'poll'
    | 'reaction'
    | 'edit'
    | 'payment'
    | 'form'
    | 'event'
    | 'status'
    | 'call_offer'
    | 'call_reject'
    /** An audio call's file, played once the callee answered. */
    | 'call_audio'
    /** The days of history a new link asked the phone for (`?history=` on connect). */
    | 'history_sync'
    | 'delete'
    | 'presence'
    | 'chat'
    | 'group'
    | 'group_invite'
    | 'channel'
    | 'community';
  /** Unix milliseconds. */
  timestamp: number;
  text?: string;
  media?: OutboxMedia;
  /** The quoted message of a reply. */
  replyTo?: string;
  /** The JIDs a text mentions. */
  mentions?: string[];
  /** A text's preview card. */
  linkPreview?: { url: string; title: string; description?: string; thumbnailBytes?: number };
  location?: Location;
  /** Chat presence (`composing` before a delayed message). */
  presence?: ChatPresence;
  buttons?: Button[];
  /** The header and footer of a buttons or list message. */
  header?: string;
  footer?: string;
  list?: { buttonText: string; sections: ListSection[] };
  carousel?: OutboxCard[];
  contacts?: ContactCard[];
  poll?: { question: string; options: string[]; maxAnswer: number };
  reaction?: { messageId: string; emoji: string };
  edit?: { messageId: string; text: string };
  /** Sent again from another chat. */
  forwarded?: boolean;
  payment?: PixPayment;
  /** A native-flow form: its text, footer and the flow's parameters. */
  form?: FormMessage;
  /** A call's event card, or an invitation to an event. */
  event?: EventCard | EventDetails;
  status?: { type: string; backgroundColor?: string; font?: number };
  call?: { durationSeconds?: number; callId: string };
  deletedMessageId?: string;
  /** An invitation to a group, sent when the contact's privacy refuses being added. */
  groupInvite?: { groupJid: string; subject: string; inviteCode: string };
  /** A chat, group, channel or community operation: its name and what it was given. */
  operation?: { name: string } & Record<string, unknown>;
}

/** A carousel card as the outbox shows it. */
export interface OutboxCard {
  title: string;
  subtitle?: string;
  media?: OutboxMedia;
  body: string;
  footer?: string;
  buttons: Button[];
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
  /**
   * `announce`: only admins send; `locked`: only admins edit the subject, description and picture;
   * `memberAdd`: every member may add others; `joinApproval`: recorded (the sandbox queues no join).
   */
  settings: GroupSettings;
  /** The current invite code (the link is `https://chat.whatsapp.com/<code>`). */
  inviteCode: string;
  /** Unix milliseconds. */
  createdAt: number;
  /** The group's picture, a JPEG as base64; null when it has none. */
  picture: string | null;
}
