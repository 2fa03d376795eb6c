import type {
  ChatLabels,
  ChatPresence,
  EventCard,
  GroupInfo,
  LabelInfo,
  LinkChallenge,
  LinkPreview,
  LinkRequest,
  Location,
  MessageContent,
  MediaKind,
  PrivacyField,
  PrivacySettings,
  ProfileInfo,
  QuotedMessage,
  SentMessage,
} from '../msgnet/msgnet-driver.js';
import type { ConnectionState } from '../store/records.js';

/**
 * The calls an instance actor answers, with their payloads and results. A call crosses the wire as JSON
 * when the owner is another node, so payloads and results are plain data. Modules above the actors (the
 * chatbot, the helpdesk) add their calls by augmenting this interface from their own `*-calls.ts`, so the
 * actor core imports nothing of theirs.
 */
export interface ActorCallMap extends IdempotencyCallMap {
  /** Starts linking (QR or pairing code), or says the instance is already connected. */
  'msgnet.connect': { payload: LinkRequest; result: LinkChallenge };
  'msgnet.logout': { payload: Record<string, never>; result: { state: ConnectionState } };
  'msgnet.reconnect': { payload: Record<string, never>; result: { state: ConnectionState } };
  'msgnet.sendText': {
    /** `mentionAll`: every member of the group `to` is mentioned too (resolved on the owner). */
    payload: SendCommon & { text: string; mentions?: string[]; mentionAll?: boolean; linkPreview?: LinkPreview };
    result: SentMessage;
  };
  'msgnet.sendLocation': { payload: SendCommon & { location: Location }; result: SentMessage };
  'msgnet.sendMedia': { payload: SendCommon & { media: WireMedia }; result: SentMessage };
  /** Contacts, interactive messages, polls, events, reactions, edits and forwards. */
  'msgnet.send': { payload: SendCommon & { content: WireContent }; result: SentMessage };
  /** Revokes a message for everyone (a status too) and drops it from the history. */
  'msgnet.deleteMessage': {
    payload: { chatJid: string; messageId: string; fromMe: boolean };
    result: { deleted: true };
  };
  /** `sent: false` when the driver cannot show chat presence. */
  'msgnet.presence': { payload: { to: string; state: ChatPresence }; result: { sent: boolean } };
  /** Whether a number is on the network (and its JID and LID). */
  'msgnet.lookup': {
    payload: { number: string };
    result: { found: boolean; jid: string | undefined; lid: string | undefined };
  };
  /** The linked number's profile, or a contact's (`jid`); undefined when the contact is not on the network. */
  'msgnet.profile': { payload: { jid?: string }; result: ProfileInfo | undefined };
  'groups.list': { payload: { includeMembers: boolean }; result: GroupInfo[] };
  'profile.update': { payload: ProfileUpdate; result: { updatedFields: ProfileField[] } };
  'privacy.get': { payload: Record<string, never>; result: PrivacySettings };
  /** Applies the fields one by one, in order, then re-reads all of them. */
  'privacy.update': { payload: { changes: [PrivacyField, string][] }; result: PrivacySettings };
  'labels.chats': { payload: { refresh: boolean }; result: ChatLabels[] };
  'labels.list': { payload: Record<string, never>; result: LabelInfo[] };
  'labels.assign': { payload: { chatJid: string; labelIds: string[]; add: boolean }; result: ChatLabels };
  'status.publish': { payload: StatusPayload; result: SentMessage & { senderJid: string } };
  'call.offer': { payload: { to: string; seconds: number }; result: { callId: string } };
  /** Creates a call link and sends the event card that carries it. */
  'call.schedule': {
    payload: { to: string; card: Omit<EventCard, 'joinLink'> };
    result: { messageId: string; token: string; url: string };
  };
  /** A received file of the history, downloaded again from the session while it still holds the message. */
  'media.download': { payload: { messageId: string }; result: { base64: string; mimetype: string; fileName?: string } };
  /** Re-reads the instance's settings from the store and applies what is live (presence). */
  'settings.apply': { payload: Record<string, never>; result: { applied: boolean } };
  /** Who owns the instance and under which epoch. */
  describe: { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: one owned write, recorded when the store accepts it. */
  'probe.write': { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: saves a link (what a linked messaging session leaves), making the instance runnable. */
  'probe.link': { payload: Record<string, never>; result: ActorDescription };
}

/** What the edge does with a request that carries a key. */
export type IdempotencyBegin =
  | { outcome: 'proceed' }
  | { outcome: 'replay'; status: number; body: unknown }
  | { outcome: 'reused' }
  | { outcome: 'in-progress' };

export interface IdempotencyCallMap {
  /** Looks the key up and, when it is new, records it as started (one actor turn: no race between two). */
  'idempotency.begin': { payload: { key: string; fingerprint: string }; result: IdempotencyBegin };
  /** Records the answer that later requests with the key replay. */
  'idempotency.finish': {
    payload: { key: string; fingerprint: string; status: number; body: unknown };
    result: { recorded: true };
  };
  /** Forgets a started key whose request surely did nothing (refused before any side effect). */
  'idempotency.abandon': { payload: { key: string }; result: { forgotten: true } };
}

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

/** Media on the wire between nodes: bytes as base64 (payloads are JSON when the owner is another node). */
export interface WireMedia {
  kind: MediaKind;
  base64: string;
  mimetype: string;
  fileName?: string;
  caption?: string;
  ptt?: boolean;
  seconds?: number;
  waveform?: number[];
}

export interface StatusPayload {
  type: 'text' | 'image' | 'video' | 'audio';
  text: string;
  media?: WireMedia;
  backgroundColor?: string;
  font?: number;
}

export type ProfileField = 'profilePicture' | 'profileName' | 'profileStatus';

/** Only the fields to apply; `picture` is the converted JPEG as base64, or null to remove it. */
export interface ProfileUpdate {
  picture?: string | null;
  name?: string;
  status?: string;
}

export type ActorCallKind = keyof ActorCallMap;
export type ActorPayload<K extends ActorCallKind> = ActorCallMap[K]['payload'];
export type ActorResult<K extends ActorCallKind> = ActorCallMap[K]['result'];

export interface ActorDescription {
  instanceId: string;
  nodeId: string;
  epoch: number;
  state: ActorState;
}

/**
 * Lifecycle of an actor on its node:
 * - `activating`: lease taken, epoch being claimed, behaviour starting; calls wait;
 * - `active`: runs calls one at a time;
 * - `draining`: handing off or shutting down: runs calls until the mailbox is empty (or the drain
 *   timeout passes), then stops;
 * - `stopped`: gone from this node; every side effect has ceased; calls get NotOwnerError.
 */
export type ActorState = 'activating' | 'active' | 'draining' | 'stopped';
