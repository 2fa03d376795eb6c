import type { ConnectionState } from '../store/records.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/**
 * What a session reports, in network terms but already normalised (one shape for every driver). The
 * actor turns these into the API's event payloads (message.exchange, message.status, …).
 */
export type MsgNetEvent = ConnectionEvent | MessageEvent | DeliveryEvent | CallEvent | GroupEvent | LabelEvent;

/** The `reason` of a close because WhatsApp refuses the account's logins for a while (a temporary ban). */
export const TEMP_BAN_REASON = 'temporarily banned';

export interface ConnectionEvent {
  type: 'connection';
  state: ConnectionState;
  numberJid?: string;
  /** A fresh QR code while `state` is `qr`. */
  qrCode?: string;
  /** Why the connection closed (`logged out`, `replaced by another session`…). */
  reason?: string;
  /** The network's own words when it could not be reached (`getaddrinfo ENOTFOUND web.whatsapp.com`). */
  error?: string;
  profileName?: string;
  /** Once connected: whether the number is a WhatsApp Business account, and then its business name. */
  business?: { isBusiness: boolean; name?: string };
}

/** A place, as a location message carries it. */
export interface Location {
  /** Degrees, -90 to 90. */
  latitude: number;
  /** Degrees, -180 to 180. */
  longitude: number;
  name?: string;
  address?: string;
}

/** A contact card (vCard) as a contact message carries it. */
export interface ContactCard {
  fullName: string;
  /** Digits with the country code. */
  phone: string;
  organization?: string;
  email?: string;
  url?: string;
}

/** An invitation to an event, as an event message carries it. */
export interface EventDetails {
  name: string;
  description?: string;
  /** Unix milliseconds. */
  startAt: number;
  endAt?: number;
  location?: string;
  joinLink?: string;
}

/**
 * What a received message is. `media` covers stickers too (`media.kind`); `interactive` is a buttons, list
 * or carousel message someone sent us; `revoked` a message deleted for everyone.
 */
export type MessageType =
  | 'text'
  | 'media'
  | 'location'
  | 'contact'
  | 'reaction'
  | 'poll'
  | 'poll_vote'
  | 'event'
  | 'buttons_response'
  | 'list_response'
  | 'edit'
  | 'revoked'
  | 'interactive'
  | 'payment'
  | 'other';

/** The content of the kinds beyond text, media and location (one of them is set, by `type`). */
export interface MessageDetails {
  /** The row of a list a contact chose (`list_response`). */
  selectedRowId?: string;
  /** The cards of a `contact` message. */
  contacts?: ContactCard[];
  /** What a `reaction` reacts to; an empty emoji removes the reaction. */
  reaction?: { messageId: string; emoji: string };
  poll?: { question: string; options: string[]; maxAnswer: number };
  /** A `poll_vote`: the poll it answers and the options chosen (all of the voter's choices; none withdraws). */
  pollVote?: { pollId: string; options: string[] };
  event?: EventDetails;
  /** An `edit`: the message it replaces and its new text (also in `text`). */
  edit?: { messageId: string; text: string };
  /** A `revoked` message: the one deleted for everyone. */
  revoked?: { messageId: string };
  /** Forwarded from another chat. */
  forwarded?: boolean;
}

export interface Party {
  jid: string;
  lid?: string;
  name?: string;
}

/** A message's file as the network describes it (its bytes are downloaded apart). */
export interface MessageMedia {
  kind: MediaKind;
  mimetype: string;
  fileName?: string;
  caption?: string;
  size?: number;
  /** An `audio` recorded as a voice note (push-to-talk). */
  ptt?: boolean;
  /** A `video` recorded as a round video note. */
  ptv?: boolean;
}

export interface NormalizedMessage extends MessageDetails {
  id: string;
  fromMe: boolean;
  /** Unix milliseconds. */
  timestamp: number;
  /** `isCommunity`: a community's parent group, when the session knows the group (absent: not known to be one). */
  chat: Party & { type: 'private' | 'group' | 'newsletter' | 'status'; isCommunity?: boolean };
  sender: Party;
  type: MessageType;
  text: string;
  media?: MessageMedia;
  /** The id of the button a contact clicked (`buttons_response`). */
  selectedButtonId?: string;
  /** The JIDs the message mentions (each notified, as `@number` in the text). */
  mentions?: string[];
  /** The place of a `location` message. */
  location?: Location;
}

/**
 * The network's acknowledgement of what it handed over: WhatsApp forgets a message once its receipt
 * arrives (and a call offer once acked), so a session that can hold them back gives the owner this to
 * call once the event is durably handled. Until then the network keeps it, and gives it to the next
 * owner if this one dies first. Calling it twice does nothing; not calling it gets the event redelivered.
 */
export type Acknowledge = () => void;

export interface MessageEvent {
  type: 'message';
  message: NormalizedMessage;
  /** Sends the message's receipt (drivers whose network waits for it). */
  acknowledge?: Acknowledge;
}

/**
 * How far a message got. `read_self` / `played_self`: a message this account received was read (or its
 * voice note played) on the account's own phone or another of its devices.
 */
export type DeliveryStatus = 'sent' | 'delivered' | 'read' | 'played' | 'failed' | 'read_self' | 'played_self';

export interface DeliveryEvent {
  type: 'delivery';
  chatJid: string;
  recipient: string;
  status: DeliveryStatus;
  messageIds: string[];
  timestamp: number;
}

/** A call's progress; `latency` is the network's relay latency report while the call is set up. */
export type CallStatus = 'offer' | 'accepted' | 'rejected' | 'terminated' | 'latency';

export interface CallEvent {
  type: 'call';
  callId: string;
  from: string;
  status: CallStatus;
  /** Why a call ended, when the network says (`timeout`: nobody answered). */
  reason?: string;
  isVideo: boolean;
  isGroup: boolean;
  timestamp: number;
  /** The network held the offer while the instance was away and gave it at the next login: it may be over. */
  offline?: boolean;
  /** Acknowledges an offer to the network (drivers whose network waits for it). */
  acknowledge?: Acknowledge;
}

/** What changed in a group: members, then its name, description, settings, or the group's end. */
export type GroupAction = 'joined' | 'left' | 'promoted' | 'demoted' | 'name' | 'description' | 'settings' | 'delete';

export interface GroupEvent {
  type: 'group';
  groupJid: string;
  action: GroupAction;
  participants: Party[];
  groupName?: string;
  /** Who made the change, when the network says. */
  author?: string;
  timestamp: number;
}

export interface LabelEvent {
  type: 'labels';
  chatJid: string;
  labels: { id: string; name: string }[];
  action: 'add' | 'remove' | 'edit';
  timestamp: number;
}
