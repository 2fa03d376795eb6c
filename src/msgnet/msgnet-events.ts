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

export interface Party {
  jid: string;
  lid?: string;
  name?: string;
}

export interface NormalizedMessage {
  id: string;
  fromMe: boolean;
  /** Unix milliseconds. */
  timestamp: number;
  chat: Party & { type: 'private' | 'group' | 'newsletter' | 'status' };
  sender: Party;
  type: 'text' | 'media' | 'location' | 'buttons_response' | 'interactive' | 'payment' | 'event' | 'reaction' | 'other';
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

export interface GroupEvent {
  type: 'group';
  groupJid: string;
  action: 'joined' | 'left' | 'promoted' | 'demoted' | 'name' | 'delete';
  participants: Party[];
  groupName?: string;
  timestamp: number;
}

export interface LabelEvent {
  type: 'labels';
  chatJid: string;
  labels: { id: string; name: string }[];
  action: 'add' | 'remove' | 'edit';
  timestamp: number;
}
