/**
 * What the store keeps. Secrets are held sealed (`…Sealed`, AES-256-GCM via SecretBox); tokens that
 * only need checking are held as SHA-256 hashes (`…Hash`).
 */

export interface AccountRecord {
  id: string;
  name: string;
  tokenHash: string;
  instanceQuota: number;
  allowedOrigins: string[];
  createdAt: string;
  /** Set while an operator has disabled the account: its tokens answer 401 and its instances do not run. */
  disabledAt?: string | undefined;
  /** The account's switch per broker: what its instances publish unless they have a block of their own. */
  brokers?: AccountBrokers | undefined;
}

/** An account's default broker blocks (`POST /api/events/rabbitmq` or `/nats` with its TokenAccount). */
export interface AccountBrokers {
  rabbitmq?: BrokerConfig | undefined;
  nats?: BrokerConfig | undefined;
}

/** The seven behaviour settings of the spec's Resources section. */
export interface InstanceSettings {
  autoRejectCalls: boolean;
  callRejectMessage: string;
  ignoreGroupMessages: boolean;
  keepOnlineStatus: boolean;
  autoReadMessages: boolean;
  disableHistorySync: boolean;
  ignoreStatus: boolean;
}

export const DEFAULT_SETTINGS: InstanceSettings = {
  autoRejectCalls: false,
  callRejectMessage: '',
  ignoreGroupMessages: false,
  keepOnlineStatus: false,
  autoReadMessages: false,
  disableHistorySync: true,
  ignoreStatus: false,
};

export type ProxyProtocol = 'http' | 'https' | 'socks5';

export interface ProxyConfig {
  enabled: boolean;
  host: string;
  port: string;
  protocol: ProxyProtocol;
  user: string | undefined;
  passwordSealed: string | undefined;
}

export interface WebsocketConfig {
  enabled: boolean;
  /** Empty with `enabled` = every event. */
  events: string[];
  base64: boolean;
}

export interface HelpdeskConfig {
  enabled: boolean;
  baseUrl: string;
  accountId: number;
  apiTokenSealed: string;
  inboxName: string;
  signMessages: boolean;
  ignoreGroups: boolean;
  startAsPending: boolean;
  reopenResolved: boolean;
  inboxId: number | undefined;
  /** `active | paused | error`; `pending` until the helpdesk module has activated the block. */
  status: 'pending' | 'active' | 'paused' | 'error';
  lastError: string | undefined;
  /** The secret in the inbox's webhook URL (what authenticates Chatwoot's calls), sealed. */
  webhookSecretSealed?: string;
}

export type ChatbotTriggerType = 'all' | 'keyword';
export type ChatbotTriggerOperator = 'contains' | 'equals' | 'startsWith' | 'endsWith' | 'regex';

/** The chatbot block of the creation body: the first bot's settings (kept as is while the chatbot module is off). */
export type ChatbotBlock = Pick<
  ChatbotBotRecord,
  | 'enabled'
  | 'url'
  | 'triggerType'
  | 'triggerOperator'
  | 'triggerValue'
  | 'expireMinutes'
  | 'expireMessage'
  | 'keywordFinish'
  | 'finishMessage'
  | 'typingDelayMs'
  | 'stopBotFromMe'
  | 'debounceSeconds'
  | 'ignoreGroups'
  | 'label'
>;

/**
 * One chatbot bot of an instance (spec 2): configuration any node may read. Writes are serialised by the
 * instance's actor; the store also refuses a second bot with the same trigger key (chatbotTriggerKey).
 */
export interface ChatbotBotRecord {
  instanceId: string;
  /** UUID. */
  botId: string;
  enabled: boolean;
  label: string;
  /** The published flow's viewer URL; its last path segment is the flow's public id. */
  url: string;
  triggerType: ChatbotTriggerType;
  /** Set for keyword bots only. */
  triggerOperator: ChatbotTriggerOperator | undefined;
  triggerValue: string | undefined;
  /** Inactivity before a session expires; 0 = never (fractions allowed). */
  expireMinutes: number;
  expireMessage: string;
  keywordFinish: string;
  finishMessage: string;
  typingDelayMs: number;
  stopBotFromMe: boolean;
  debounceSeconds: number;
  ignoreGroups: boolean;
  noStartFromMe: boolean;
  keepOpen: boolean;
  /** Answers messages no trigger matched (at most one bot per instance). */
  fallback: boolean;
  createdAt: string;
  updatedAt: string;
}

/**
 * The chatbot integration link of an instance: present while the instance has bots.
 * `status`: `active`, or `error` after a flow call failed (`lastError`) until the next success or change.
 */
export interface ChatbotLinkRecord {
  instanceId: string;
  status: 'active' | 'error';
  lastError: string | undefined;
  fallbackBotId: string | undefined;
  updatedAt: string;
  /** Incremented by every save: what a conditional save compares (0 for a link stored without one). */
  version: number;
}

export interface StorageConfig {
  enabled: boolean;
  region: string;
  bucket: string;
  accessKey: string;
  secretKeySealed: string;
  endpoint: string | undefined;
  pathPrefix: string;
  /** Changes with every save of the block: a storage status is current only for the revision it checked. */
  revision?: string;
}

/**
 * The last outcome of using the storage block (an upload, or the check of POST /api/instance/s3). Kept
 * as its own block so that recording it never overwrites a configuration saved in the meantime.
 */
export interface StorageStatus {
  /** The `StorageConfig.revision` it concerns. */
  revision: string;
  /** `ok`: the last upload or check worked; `error`: it failed with `error`. */
  state: 'ok' | 'error';
  /** Readable cause of the failure (`the access key id is not known to the store`…). */
  error: string | undefined;
  checkedAt: string;
}

/** Configuration of an instance: any node may read it and write it (no owner epoch needed). */
export interface InstanceConfig {
  settings: InstanceSettings;
  proxy: ProxyConfig | undefined;
  websocket: WebsocketConfig | undefined;
  helpdesk: HelpdeskConfig | undefined;
  chatbot: ChatbotBlock | undefined;
  storage: StorageConfig | undefined;
  storageStatus?: StorageStatus | undefined;
  /** Events published to RabbitMQ (AMQP_URL). */
  rabbitmq?: BrokerConfig | undefined;
  /** Events published to NATS JetStream (NATS_URL). */
  nats?: BrokerConfig | undefined;
}

/** An instance's events to a message broker: on or off, and which events (empty: the six instance events). */
export interface BrokerConfig {
  enabled: boolean;
  events: string[];
}

/**
 * Connection lifecycle of an instance:
 * - `disconnected`: no socket (the state at creation);
 * - `connecting`: a socket is opening;
 * - `qr`: waiting for the phone to scan a QR code or enter a pairing code;
 * - `connected`: linked and online;
 * - `loggedout`: the phone unlinked the device; a new link is needed.
 */
export type ConnectionState = 'disconnected' | 'connecting' | 'qr' | 'connected' | 'loggedout';

/** Instance-owned connection facts: written only by the owner, under its epoch. */
export interface ConnectionInfo {
  state: ConnectionState;
  numberJid: string | undefined;
  updatedAt: string;
  /** The push name and picture the network reports for the linked number. */
  profileName?: string;
  profilePictureUrl?: string;
  /** Whether the linked number is a WhatsApp Business account (learnt at its first connection). */
  isBusiness?: boolean;
  /** A business account's name. */
  businessName?: string;
  /** Why the last attempt to reach the network failed; dropped once connected. */
  lastError?: string;
}

export interface InstanceRecord {
  id: string;
  accountId: string;
  name: string;
  tokenHash: string;
  tokenSealed: string;
  /** Fencing epoch: incremented by every `claim`; owned writes must carry the current value. */
  ownerEpoch: number;
  config: InstanceConfig;
  connection: ConnectionInfo;
  createdAt: string;
}

/** The node that holds an instance, named by its node lease (`node:<nodeId>`) and that lease's token. */
export interface OwnerHolder {
  node: string;
  token: string;
}

/** A node's last heartbeat in the store: the lease token it renewed, and how long ago (the store's clock). */
export interface NodeHeartbeat {
  token: string;
  ageMs: number;
}

/** Who owns an instance, as the store knows it: the fencing epoch and, while a node holds it, that node. */
export interface InstanceOwnership {
  epoch: number;
  holder?: OwnerHolder;
}

export interface WebhookRecord {
  instanceId: string;
  label: string;
  enabled: boolean;
  url: string;
  authorizationSealed: string | undefined;
  byEvents: boolean;
  events: string[];
  base64: boolean;
  /** The sealed `whsec_…` secret that signs its deliveries (Standard Webhooks); absent on webhooks made before signing. */
  secretSealed?: string;
  /** The secret the last rotation replaced: it signs too, beside the new one, until `previousSecretUntil`. */
  previousSecretSealed?: string;
  previousSecretUntil?: string;
  createdAt: string;
  updatedAt: string;
}

/** One write of instance-owned state (auth creds, signal keys, chatbot sessions…); `value: null` deletes. */
export interface OwnedStateOp {
  namespace: string;
  key: string;
  value: string | null;
}

/** A message of the chat history (GET /api/chat/history): what the network reported or the API sent. */
export interface MessageRecord {
  instanceId: string;
  /** The network's message id. */
  id: string;
  chatJid: string;
  fromMe: boolean;
  senderJid: string;
  /** Unix milliseconds. */
  timestamp: number;
  /** `text`, the media kind, `status`, … as the normalised event says. */
  type: string;
  /** The text, or the media caption. */
  text: string;
  media: { kind: string; mimetype: string; fileName?: string; size?: number; stored?: StoredObject } | undefined;
  /** Where the message got to: set by delivery receipts (ours) or on arrival (theirs). */
  status?: MessageStatus;
  /** The client's label given with the send (`source`); kept by later saves that carry none. */
  source?: string;
  /** Unix milliseconds when its `message.exchange` left (durably queued); kept by later saves. */
  emittedAt?: number;
}

/** One chat of the history, as the chat list shows it. */
export interface ChatSummary {
  chatJid: string;
  /** Unix milliseconds of its newest message. */
  lastMessageAt: number;
  /** Received messages not read yet. */
  unread: number;
}

/** Where a chat list page ended: the last chat's newest message time and JID. */
export interface ChatCursor {
  lastMessageAt: number;
  chatJid: string;
}

/** Where a received file was uploaded (the instance's object storage). */
export interface StoredObject {
  bucket: string;
  key: string;
  /** The custom endpoint of a compatible store; absent for the standard service. */
  endpoint?: string;
}

/** A message's progress; a status never goes back (see MESSAGE_STATUS_RANK). */
export type MessageStatus = 'pending' | 'sent' | 'received' | 'failed' | 'delivered' | 'read' | 'played';

/** Later statuses rank higher; `failed` only replaces what had not been delivered yet. */
export const MESSAGE_STATUS_RANK: Record<MessageStatus, number> = {
  pending: 0,
  sent: 1,
  received: 1,
  failed: 1.5,
  delivered: 2,
  read: 3,
  played: 4,
};

/** Where a page of history starts: strictly older than this (time, then id for messages of one millisecond). */
export interface HistoryCursor {
  timestamp: number;
  id?: string;
}

/** An account's webhook for Enterprise events (spec 4.9); the signing secret is kept sealed. */
export interface AccountWebhookRecord {
  accountId: string;
  url: string;
  events: string[];
  enabled: boolean;
  secretSealed: string;
  createdAt: string;
  updatedAt: string;
}

/**
 * One billing event, recorded once under its unique `key` (event, instance or account, period) before
 * it is delivered; `sentAt` is set once its delivery is queued.
 */
export interface BillingLedgerEntry {
  key: string;
  accountId: string;
  event: string;
  description: string;
  /** The event's `data`, as JSON. */
  data: string;
  createdAt: string;
  sentAt: string | undefined;
}

/** One received file kept for base64 deliveries and catch-up (GET /api/chat/media), until `expiresAt`. */
export interface MediaBlob {
  instanceId: string;
  messageId: string;
  data: Buffer;
  /** Unix ms. */
  expiresAt: number;
}
