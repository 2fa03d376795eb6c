import { TEMP_BAN_REASON } from '../msgnet/msgnet-events.js';
import type {
  CallStatus,
  DeliveryStatus,
  GroupAction,
  MediaKind,
  MessageMedia,
  MsgNetEvent,
  NormalizedMessage,
  Party,
} from '../msgnet/msgnet-events.js';
import type { ConnectionState } from '../store/records.js';
import type { InstanceEventName } from './event-names.js';

/**
 * The `data` of each instance event, as webhooks and WebSockets deliver it. These layouts are a public
 * contract (docs/events.md): add fields, never rename or remove one, except where the hosted product's
 * layout claims a name (its value wins; ours moves beside it). Timestamps are RFC 3339 with zone.
 */

export interface PartyData {
  jid: string;
  lid: string | null;
  name: string | null;
}

export type ChatData = PartyData & {
  type: 'private' | 'group' | 'newsletter' | 'status';
  /** A community's parent group (false for private chats, and for groups not known to be one). */
  isCommunity: boolean;
};

/** What a message's media is: the hosted product's `ptt` (voice note) and `ptv` (round video) beside the kinds. */
export type MediaType = 'image' | 'video' | 'audio' | 'document' | 'sticker' | 'ptt' | 'ptv';

export interface MessageExchangeData {
  id: string;
  direction: 'incoming' | 'outgoing';
  timestamp: string;
  chat: ChatData;
  sender: PartyData;
  /** The other end of a private chat from this instance's point of view; the group for group chats. */
  recipient: string;
  /** The message in the hosted product's layout, with our own fields beside it. */
  message: {
    id: string;
    direction: 'incoming' | 'outgoing';
    timestamp: string;
    chat: ChatData;
    sender: PartyData;
    /** `message_edit` and `message_revoke` for edits and revocations; else the kind (see docs/events.md). */
    type: string;
    content: { text: string };
    /** The text as a plain string: the older form of `content`. */
    text: string;
    /** An edit of an earlier message (`type` `message_edit`). */
    isEdit: boolean;
    source: string;
    media: {
      type: MediaType;
      /** The file's kind without the voice/round note distinction (`audio` for a `ptt`, `video` for a `ptv`). */
      kind: MediaKind;
      url: string | null;
      s3Url: string | null;
      base64: string | null;
      mimetype: string;
      fileName: string | null;
      caption: string | null;
      /** Bytes, when the network reports it. */
      size: number | null;
      /** Why `url`/`s3Url`/`base64` are missing where they were expected (a failed download or upload). */
      error: string | null;
    } | null;
    /** A `buttons_response` or `list_response`: the id of the button or row chosen (the other null). */
    interactive: { selectedButtonId: string | null; selectedRowId: string | null } | null;
    /** The JIDs the message mentions; empty when none. */
    mentions: string[];
    /** A `location` message's place; null otherwise. */
    location: { latitude: number; longitude: number; name: string | null; address: string | null } | null;
    /** A `contact` message's cards. */
    contacts: ContactData[] | null;
    /** A `reaction`: the message it reacts to; an empty emoji removes the reaction. */
    reaction: { messageId: string; emoji: string } | null;
    poll: { question: string; options: string[]; maxAnswer: number } | null;
    /** A `poll_vote`: the poll and every option the voter now chooses (none: the vote withdrawn). */
    pollVote: { pollId: string; options: string[] } | null;
    event: {
      name: string;
      description: string | null;
      startAt: string;
      endAt: string | null;
      location: string | null;
      joinLink: string | null;
    } | null;
    /** A `message_edit`: the message it replaces and its new text. */
    edit: { messageId: string; text: string } | null;
    /** A `message_revoke`: the message deleted for everyone. */
    revoked: { messageId: string } | null;
    forwarded: boolean;
  };
}

export interface ContactData {
  fullName: string;
  phone: string;
  organization: string | null;
  email: string | null;
  url: string | null;
}

export interface MessageStatusData {
  timestamp: string;
  chat: { type: 'private' | 'group' | 'status'; jid: string };
  recipient: string;
  status: DeliveryStatus;
  messageIds: string[];
}

/** The hosted product's connection states: ours renamed, and `temp_banned` when the network refuses a login for a while. */
export type HostedState = 'disconnected' | 'connecting' | 'qr_ready' | 'connected' | 'logged_out' | 'temp_banned';

export interface InstanceStateData {
  instance: string;
  state: HostedState;
  /** Our own state name (the older form of `state`, as the REST answers give it). */
  connectionState: ConnectionState;
  timestamp: string;
}

export interface GroupFlowData {
  groupJid: string;
  type: GroupAction;
  participants: PartyData[];
  groupName: string | null;
  /** Who made the change; null when the network does not say. */
  author: string | null;
  timestamp: string;
}

export interface CallUpdateData {
  callId: string;
  from: string;
  status: CallStatus;
  /** Why the call ended, when the network says (`timeout`: nobody answered); else null. */
  reason: string | null;
  isVideo: boolean;
  timestamp: string;
}

export interface LabelUpdateData {
  chat: string;
  labels: { id: string; name: string }[];
  action: 'add' | 'remove' | 'edit';
  timestamp: string;
}

/** The typed event map: event name → its `data`. */
export interface InstanceEventMap {
  'message.exchange': MessageExchangeData;
  'message.status': MessageStatusData;
  'instance.state': InstanceStateData;
  'group.flow': GroupFlowData;
  'call.update': CallUpdateData;
  'label.update': LabelUpdateData;
}

export type InstanceEvent = { [K in InstanceEventName]: { event: K; data: InstanceEventMap[K] } }[InstanceEventName];

/**
 * What goes with an event to some consumers only, never in the event itself: a received file's bytes
 * for the WebSocket (when its `base64` flag is on), and the reference to the one kept copy that base64
 * webhooks resolve when they are sent (so the durable queue never holds the bytes once per webhook).
 */
export interface EventAttachments {
  /** The file as base64, for the instance's WebSocket clients. */
  websocketMediaBase64?: string;
  /** The message id under which the file is kept (MediaBlobStore), for base64 webhooks. */
  webhookMediaBlob?: string;
}

/** What every delivery carries (webhook body and WebSocket frame). */
export interface EventEnvelope {
  event: string;
  data: unknown;
  instanceData: { instance: string; token: string; baseUrl: string };
}

const iso = (ms: number) => new Date(ms).toISOString();
const party = (p: Party): PartyData => ({ jid: p.jid, lid: p.lid ?? null, name: p.name ?? null });

/** The chat as events give it: `isCommunity` from what the session knows, false where it cannot be one. */
const chatOf = (m: NormalizedMessage): ChatData => ({
  ...party(m.chat),
  type: m.chat.type,
  isCommunity: m.chat.isCommunity ?? false,
});

/** The hosted product's media type: a voice note is `ptt`, a round video note `ptv`, else the kind. */
export function mediaType(media: MessageMedia): MediaType {
  if (media.kind === 'audio' && media.ptt) return 'ptt';
  if (media.kind === 'video' && media.ptv) return 'ptv';
  return media.kind;
}

/** The hosted product's message type: edits and revocations renamed, other kinds as ours name them. */
export function messageType(m: NormalizedMessage): string {
  if (m.type === 'edit') return 'message_edit';
  if (m.type === 'revoked') return 'message_revoke';
  return m.type === 'media' && m.media ? m.media.kind : m.type;
}

export function messageExchange(m: NormalizedMessage, source: string): MessageExchangeData {
  const direction = m.fromMe ? 'outgoing' : 'incoming';
  const timestamp = iso(m.timestamp);
  const chat = chatOf(m);
  const sender = party(m.sender);
  return {
    id: m.id,
    direction,
    timestamp,
    chat,
    sender,
    recipient: m.chat.jid,
    message: {
      id: m.id,
      direction,
      timestamp,
      chat,
      sender,
      type: messageType(m),
      content: { text: m.text },
      text: m.text,
      isEdit: m.type === 'edit',
      source,
      media: m.media
        ? {
            type: mediaType(m.media),
            kind: m.media.kind,
            url: null,
            s3Url: null,
            base64: null,
            mimetype: m.media.mimetype,
            fileName: m.media.fileName ?? null,
            caption: m.media.caption ?? null,
            size: m.media.size ?? null,
            error: null,
          }
        : null,
      interactive:
        m.selectedButtonId || m.selectedRowId
          ? { selectedButtonId: m.selectedButtonId ?? null, selectedRowId: m.selectedRowId ?? null }
          : null,
      mentions: m.mentions ?? [],
      location: m.location
        ? {
            latitude: m.location.latitude,
            longitude: m.location.longitude,
            name: m.location.name ?? null,
            address: m.location.address ?? null,
          }
        : null,
      contacts: m.contacts
        ? m.contacts.map((c) => ({
            fullName: c.fullName,
            phone: c.phone,
            organization: c.organization ?? null,
            email: c.email ?? null,
            url: c.url ?? null,
          }))
        : null,
      reaction: m.reaction ?? null,
      poll: m.poll ?? null,
      pollVote: m.pollVote ?? null,
      event: m.event
        ? {
            name: m.event.name,
            description: m.event.description ?? null,
            startAt: iso(m.event.startAt),
            endAt: m.event.endAt !== undefined ? iso(m.event.endAt) : null,
            location: m.event.location ?? null,
            joinLink: m.event.joinLink ?? null,
          }
        : null,
      edit: m.edit ?? null,
      revoked: m.revoked ?? null,
      forwarded: m.forwarded ?? false,
    },
  };
}

const chatType = (jid: string): 'private' | 'group' | 'status' =>
  jid === 'status@broadcast' ? 'status' : jid.endsWith('@g.us') ? 'group' : 'private';

/**
 * Which network event becomes which API event (documented in docs/events.md). Connection changes are
 * turned into `instance.state` by the actor, which knows the instance's name.
 */
export function toInstanceEvent(e: Exclude<MsgNetEvent, { type: 'connection' }>, source = 'msgnet'): InstanceEvent {
  switch (e.type) {
    case 'message':
      return { event: 'message.exchange', data: messageExchange(e.message, e.message.fromMe ? source : 'msgnet') };
    case 'delivery':
      return {
        event: 'message.status',
        data: {
          timestamp: iso(e.timestamp),
          chat: { type: chatType(e.chatJid), jid: e.chatJid },
          recipient: e.recipient,
          status: e.status,
          messageIds: e.messageIds,
        },
      };
    case 'call':
      return {
        event: 'call.update',
        data: {
          callId: e.callId,
          from: e.from,
          status: e.status,
          reason: e.reason ?? null,
          isVideo: e.isVideo,
          timestamp: iso(e.timestamp),
        },
      };
    case 'group':
      return {
        event: 'group.flow',
        data: {
          groupJid: e.groupJid,
          type: e.action,
          participants: e.participants.map(party),
          groupName: e.groupName ?? null,
          author: e.author ?? null,
          timestamp: iso(e.timestamp),
        },
      };
    case 'labels':
      return {
        event: 'label.update',
        data: { chat: e.chatJid, labels: e.labels, action: e.action, timestamp: iso(e.timestamp) },
      };
  }
}

const HOSTED_STATES: Record<ConnectionState, HostedState> = {
  disconnected: 'disconnected',
  connecting: 'connecting',
  qr: 'qr_ready',
  connected: 'connected',
  loggedout: 'logged_out',
};

/** Our connection state in the hosted product's words; a close for a temporary ban is `temp_banned`. */
export function hostedState(state: ConnectionState, reason?: string): HostedState {
  if (state === 'disconnected' && reason === TEMP_BAN_REASON) return 'temp_banned';
  return HOSTED_STATES[state];
}

export function instanceState(
  instance: string,
  state: ConnectionState,
  at = Date.now(),
  reason?: string,
): InstanceEvent {
  return {
    event: 'instance.state',
    data: { instance, state: hostedState(state, reason), connectionState: state, timestamp: iso(at) },
  };
}
