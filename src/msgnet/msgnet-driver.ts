import type { Logger } from 'pino';
import type { ConnectionState, InstanceSettings, ProxyProtocol } from '../store/records.js';
import type { MsgNetEvent } from './msgnet-events.js';
import type { CallOps } from './ops/call-ops.js';
import type { ChannelOps, CommunityOps } from './ops/channel-ops.js';
import type { ChatOps } from './ops/chat-ops.js';
import type { GroupOps } from './ops/group-ops.js';
import type { LabelOps } from './ops/label-ops.js';
import type { MessageOps } from './ops/message-ops.js';
import type { PrivacyOps } from './ops/privacy-ops.js';
import type { ProfileOps } from './ops/profile-ops.js';
import type { StatusOps } from './ops/status-ops.js';

export type { ContactCard, EventDetails, Location, MediaKind } from './msgnet-events.js';
export type { LinkPreview, OutgoingMedia, QuotedMessage, SendOptions, SentMessage } from './outgoing-types.js';
export type {
  Button,
  CarouselCard,
  EventCard,
  FormMessage,
  ListRow,
  ListSection,
  MessageContent,
  MessageRef,
  PixItem,
  PixPayment,
} from './message-content.js';
export type { CallLink } from './ops/call-ops.js';
export type { GroupInfo } from './ops/group-ops.js';
export type { ChatLabels, LabelInfo } from './ops/label-ops.js';
export type { ChatPresence, ReceivedMedia } from './ops/message-ops.js';
export type { PrivacyField, PrivacySettings } from './ops/privacy-ops.js';
export type { BusinessProfile, NumberLookup, ProfileChanges, ProfileInfo } from './ops/profile-ops.js';
export type { StatusPost } from './ops/status-ops.js';

/**
 * The one seam between Switchboard and the messaging network. A driver opens one session per instance on
 * the instance's owner node; the session reports what happens through `emit` and persists its link only
 * through `auth` (fenced, epoch-conditional writes), so that a new owner resumes it after a failover.
 */
/** What a driver's sessions amount to on this node, for capacity metrics. */
export interface DriverStats {
  /** Sessions connected to the network now. */
  connected: number;
  /** Logins waiting for their turn (CONNECT_RATE_PER_SECOND). */
  loginsWaiting: number;
  /** Logins the network refused (429 or 503) since the driver started. */
  loginsRefused: number;
  /** Times a due login waited because the node's event loop was too far behind (CONNECT_MAX_LOOP_DELAY_MS). */
  loginsHeldBack: number;
}

export interface MsgNetDriver {
  readonly name: 'baileys' | 'sandbox';
  open(options: SessionOptions): Promise<MsgNetSession>;
  /** Unset for a driver without a network (the sandbox). */
  stats?(): DriverStats;
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
  /** The owner's epoch: a simulator's observer is told it with each connection. */
  epoch?: number;
  /**
   * Since when (ms since the epoch) the instance has been away from the network, as far as the store knows
   * (its last connection change): a node's paced logins go to the instance away the longest first.
   */
  awaySince?: number;
  /**
   * Asked before the session connects again on its own (a reconnect after a close, or after the network
   * said another connection replaced this one): whether this node still owns the instance, by the store's
   * epoch. A node that does not must stay quiet, or its login would replace the owner's connection.
   */
  stillOwner?: () => Promise<boolean>;
  /**
   * Asked synchronously right before every write to the network; throws (NotOwnerError) once this node may
   * no longer own the instance (its lease may have lapsed). A turn that began under a valid lease (a send
   * that spent seconds uploading its media, say) stops at the wire instead of acting for a lost instance.
   */
  assertMayAct?: () => void;
}

/**
 * How to link a new device. `historyDays`: the days of history to ask the phone for on this first link
 * (messages older than that are not reported), whatever `disableHistorySync` says; 0 asks for none.
 */
export type LinkRequest = ({ method: 'qr' } | { method: 'pairing'; phoneNumber: string }) & { historyDays?: number };

/** What the phone must do to link, or that it is already linked. */
export type LinkChallenge =
  | { status: 'qr'; qrCode: string }
  | { status: 'pairing'; pairingCode: string }
  | { status: 'connected'; numberJid: string };

/**
 * One linked (or linking) number, on its owner node: its lifecycle here, and one operations object per
 * domain (each driver implements each in a class of its own).
 */
export interface MsgNetSession {
  readonly state: ConnectionState;
  readonly numberJid: string | undefined;
  /** Sends, deletions, read receipts, chat presence, received files. */
  readonly messages: MessageOps;
  /** The number's own profile and presence; what the network shows of others. */
  readonly profile: ProfileOps;
  readonly privacy: PrivacyOps;
  /** A Business account's labels. */
  readonly labels: LabelOps;
  /** Status posts (stories). */
  readonly status: StatusOps;
  /** Calls: rejecting, ringing, call links. */
  readonly calls: CallOps;
  /** Groups: list, create, read, change, members, invite links. */
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
}
