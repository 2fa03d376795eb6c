import type { ConnectionState } from '../store/records.js';

export type MediaKind = 'image' | 'video' | 'audio' | 'document' | 'sticker';

/**
 * What a session reports, in network terms but already normalised (one shape for every driver). The
 * actor turns these into the API's event payloads (message.exchange, message.status, …).
 */
export type MsgNetEvent = ConnectionEvent | MessageEvent | DeliveryEvent | CallEvent | GroupEvent | LabelEvent;

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

export interface NormalizedMessage extends MessageDetails {
  id: string;
  fromMe: boolean;
  /** Unix milliseconds. */
  timestamp: number;
  chat: Party & { type: 'private' | 'group' | 'newsletter' | 'status' };
  sender: Party;
  type: MessageType;
  text: string;
  media?: { kind: MediaKind; mimetype: string; fileName?: string; caption?: string; size?: number };
  /** The id of the button a contact clicked (`buttons_response`). */
  selectedButtonId?: string;
  /** The JIDs the message mentions (each notified, as `@number` in the text). */
  mentions?: string[];
  /** The place of a `location` message. */
  location?: Location;
}

export interface MessageEvent {
  type: 'message';
  message: NormalizedMessage;
}

export interface DeliveryEvent {
  type: 'delivery';
  chatJid: string;
  recipient: string;
  status: 'sent' | 'delivered' | 'read' | 'played' | 'failed';
  messageIds: string[];
  timestamp: number;
}

export interface CallEvent {
  type: 'call';
  callId: string;
  from: string;
  status: 'offer' | 'accepted' | 'rejected' | 'terminated';
  isVideo: boolean;
  isGroup: boolean;
  timestamp: number;
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
