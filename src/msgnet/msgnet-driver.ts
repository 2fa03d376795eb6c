import type { Logger } from 'pino';
import type { ConnectionState, InstanceSettings, ProxyProtocol } from '../store/records.js';
import type { ContactCard, EventDetails, Location, MsgNetEvent, NormalizedMessage } from './msgnet-events.js';

import type { ChannelOps, CommunityOps } from './ops/channel-ops.js';
import type { ChatOps } from './ops/chat-ops.js';
import type { GroupOps } from './ops/group-ops.js';

import type { OutgoingMedia, SentMessage } from './outgoing-types.js';

export type { ContactCard, EventDetails, Location, MediaKind } from './msgnet-events.js';
export type { OutgoingMedia, SentMessage } from './outgoing-types.js';

/**
 * The one seam between Switchboard and the messaging network. A driver opens one session per instance on
 * the instance's owner node; the session reports what happens through `emit` and persists its link only
 * through `auth` (fenced, epoch-conditional writes), so that a new owner resumes it after a failover.
 */
export interface MsgNetDriver {
  readonly name: 'baileys' | 'sandbox';
  open(options: SessionOptions): Promise<MsgNetSession>;
  /** Frees what the driver shares across sessions (caches, network connections). */
  close(): Promise<void>;
}

/**
 * A session's persistent, instance-owned state (creds, signal keys, and what the network cannot list back,
 * such as labels), read and written under the owner's epoch.
 */
export interface AuthStore {
  get(key: string): Promise<string | undefined>;
  getMany(keys: string[]): Promise<Map<string, string>>;
  /** Every entry whose key starts with `prefix`, in key order. */
  list(prefix: string): Promise<Map<string, string>>;
  /** All of it or nothing, in one transaction; `null` deletes. A stale epoch stops the owner. */
  set(entries: Record<string, string | null>): Promise<void>;
  /** Forgets the link (after a logout). */
  clear(): Promise<void>;
}

export interface ProxySettings {
  protocol: ProxyProtocol;
  host: string;
  port: number;
  user: string | undefined;
  password: string | undefined;
}

export interface SessionOptions {
  instanceId: string;
  auth: AuthStore;
  /** The instance's proxy, read at every new connection: a changed proxy applies on the next reconnect. */
  proxy: () => ProxySettings | undefined;
  /** Read at connect time (history sync) and on every event (ignore groups, statuses, auto-read…). */
  settings: () => InstanceSettings;
  emit: (event: MsgNetEvent) => void;
  log: Logger;
}

/** How to link a new device. */
export type LinkRequest = { method: 'qr' } | { method: 'pairing'; phoneNumber: string };

/** What the phone must do to link, or that it is already linked. */
export type LinkChallenge =
  | { status: 'qr'; qrCode: string }
  | { status: 'pairing'; pairingCode: string }
  | { status: 'connected'; numberJid: string };

/** A received message's media, as downloaded by its owner node. */
export interface ReceivedMedia {
  data: Buffer;
  mimetype: string;
  fileName?: string;
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

/** A profile as the network shows it to this account. */
export interface ProfileInfo {
  jid: string;
  name: string | null;
  /** The About text. */
  about: string | null;
  pictureUrl: string | null;
  isBusiness: boolean;
  /** A Business account's public profile. */
  business?: BusinessProfile;
}

export interface BusinessProfile {
  description: string | null;
  category: string | null;
  email: string | null;
  website: string[];
  address: string | null;
}

/** A label of a (Business) account. */
export interface LabelInfo {
  id: string;
  name: string;
}

export type Button =
  | { type: 'reply'; id: string; label: string }
  | { type: 'url'; url: string; label: string }
  | { type: 'call'; phoneNumber: string; label: string }
  | { type: 'copy'; code: string; label: string };

/** What a chat shows of us: typing, recording a voice note, neither, or just online. */
export type ChatPresence = 'composing' | 'recording' | 'paused' | 'available';

export interface ListRow {
  id: string;
  title: string;
  description?: string;
}

export interface ListSection {
  title: string;
  rows: ListRow[];
}

/** One card of a carousel; `M` is the media as it travels (bytes on the owner, base64 between nodes). */
export interface CarouselCard<M = OutgoingMedia> {
  title: string;
  subtitle?: string;
  /** An image or a video shown above the text. */
  media?: M;
  body: string;
  footer?: string;
  buttons: Button[];
}

/** A message of the chat history another message acts on (a reaction, an edit). */
export interface MessageRef {
  id: string;
  chatJid: string;
  fromMe: boolean;
  /** Its author in a group, when not us. */
  participant?: string;
}

/**
 * The message kinds beyond text, media and location, sent through `sendContent`. `M` is the media as it
 * travels: `OutgoingMedia` on the owner, base64 between nodes.
 */
export type MessageContent<M = OutgoingMedia> =
  | { kind: 'contacts'; contacts: ContactCard[] }
  | { kind: 'buttons'; text: string; header?: string; footer?: string; media?: M; buttons: Button[] }
  | { kind: 'list'; text: string; buttonText: string; header?: string; footer?: string; sections: ListSection[] }
  | { kind: 'carousel'; text?: string; footer?: string; cards: CarouselCard<M>[] }
  | { kind: 'poll'; question: string; options: string[]; maxAnswer: number }
  | { kind: 'pix'; payment: PixPayment }
  | { kind: 'event'; event: EventDetails }
  | { kind: 'reaction'; target: MessageRef; emoji: string }
  | { kind: 'edit'; target: MessageRef; text: string }
  /** A message of the history sent again, marked as forwarded: its text, or its media with the caption. */
  | { kind: 'forward'; text: string; media?: M };

export interface PixPayment {
  merchantName: string;
  key: string;
  keyType: 'CPF' | 'CNPJ' | 'EMAIL' | 'PHONE' | 'RANDOM';
}

export interface EventCard {
  name: string;
  description?: string;
  startTime: number;
  endTime?: number;
  video: boolean;
  reminderOffsetSec?: number;
  /** The call link the card carries. */
  joinLink: string;
}

export interface StatusPost {
  type: 'text' | 'image' | 'video' | 'audio';
  text: string;
  media?: OutgoingMedia;
  backgroundColor?: string;
  font?: number;
}

export interface GroupInfo {
  jid: string;
  name: string;
  description: string;
  creatorJid: string;
  memberCount: number;
  members?: { jid: string; isAdmin: boolean; isSuperAdmin: boolean }[];
}

export type PrivacyField = 'lastSeen' | 'online' | 'profile' | 'status' | 'readReceipts' | 'callAdd' | 'groupAdd';
export type PrivacySettings = Record<PrivacyField, string>;

export interface ProfileChanges {
  /** JPEG bytes, or null to remove the picture. */
  picture?: Buffer | null;
  name?: string;
  status?: string;
}

export interface ChatLabels {
  chatJid: string;
  labels: { id: string; name: string }[];
}

/** One linked (or linking) number, on its owner node. */
export interface MsgNetSession {
  readonly state: ConnectionState;
  readonly numberJid: string | undefined;
  /** Groups: create, read, change, members, invite links. */
  readonly groups: GroupOps;
  /** Chat state on the phone: archive, pin, mute, block, clear; which numbers have an account. */
  readonly chats: ChatOps;
  /** Channels (newsletters) this number owns or follows. */
  readonly channels: ChannelOps;
  readonly communities: CommunityOps;
  /** Resumes a saved link, if any (called once after open). */
  resume(): Promise<void>;
  connect(request: LinkRequest): Promise<LinkChallenge>;
  /** Unlinks the device and forgets the link. */
  logout(): Promise<void>;
  /** Closes the connection and opens it again with the saved link. */
  reconnect(): Promise<void>;
  /** Ends the connection without unlinking (handoff, shutdown). No event after it resolves. */
  close(): Promise<void>;

  sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage>;
  sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage>;
  sendButtons(to: string, text: string, buttons: Button[], options?: SendOptions): Promise<SentMessage>;
  sendPayment(to: string, payment: PixPayment, options?: SendOptions): Promise<SentMessage>;
  sendEventCard(to: string, card: EventCard): Promise<SentMessage>;
  sendLocation(to: string, location: Location, options?: SendOptions): Promise<SentMessage>;
  /** Contacts, interactive messages, polls, events, reactions, edits and forwards. */
  sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage>;
  publishStatus(post: StatusPost): Promise<SentMessage>;
  deleteMessage(chatJid: string, messageId: string, fromMe: boolean): Promise<void>;
  markRead(chatJid: string, messageIds: string[], participant?: string): Promise<void>;
  setPresence(available: boolean): Promise<void>;
  rejectCall(callId: string, from: string): Promise<void>;
  /** Rings `to` and hangs up after `seconds` (signalling only). */
  offerCall(to: string, seconds: number): Promise<{ callId: string }>;
  createCallLink(kind: 'audio' | 'video', startTime?: number): Promise<{ token: string; url: string }>;
  listGroups(includeMembers: boolean): Promise<GroupInfo[]>;
  updateProfile(changes: ProfileChanges): Promise<void>;
  getPrivacy(): Promise<PrivacySettings>;
  setPrivacy(field: PrivacyField, value: string): Promise<void>;
  /** Chats and their labels as the network reports them (a full resync when `refresh`). */
  chatLabels(refresh: boolean): Promise<ChatLabels[]>;
  /** Whether a number is on the network, and its address. */
  lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }>;
  /** The linked number's profile (no `jid`), or a contact's; undefined when the contact is not on the network. */
  getProfile(jid?: string): Promise<ProfileInfo | undefined>;
  /**
   * The bytes of a received message's media, while the session still holds that message (recent messages
   * of this activation only), through the instance's proxy. `signal` aborts the download (a deadline).
   * @throws NotFoundError when it does not, PayloadTooLargeError past `maxBytes`.
   */
  downloadMedia(message: NormalizedMessage, maxBytes: number, signal?: AbortSignal): Promise<ReceivedMedia>;
  /** Shows "typing…" (`composing`) or "recording…" in a chat, or stops it (`paused`). */
  sendChatPresence(to: string, state: ChatPresence): Promise<void>;
  /** Every label of the account, including those on no chat. */
  listLabels(): Promise<LabelInfo[]>;
  /** Adds or removes labels on a chat; returns the chat's labels after. @throws NotFoundError for an unknown label */
  assignLabels(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels>;
}
