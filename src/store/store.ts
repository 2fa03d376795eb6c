import type {
  AccountBrokers,
  AccountRecord,
  BrokerConfig,
  AccountWebhookRecord,
  BillingLedgerEntry,
  ChatbotBotRecord,
  ChatbotLinkRecord,
  ChatCursor,
  ChatSummary,
  InstanceConfig,
  MessageStatus,
  ConnectionInfo,
  InstanceOwnership,
  InstanceRecord,
  HistoryCursor,
  InstanceSettings,
  MediaBlob,
  MessageRecord,
  OwnedStateOp,
  NodeHeartbeat,
  OwnerHolder,
  WebhookRecord,
} from './records.js';

/** The configuration blocks that can be replaced whole (the settings have their own partial update). */
export type ConfigBlock = Exclude<keyof InstanceConfig, 'settings'>;

/**
 * The repositories every store implementation provides. One contract test suite
 * (test/integration/store/store-contract.ts) runs against each implementation.
 *
 * Errors: `ConflictError` on a uniqueness clash, `QuotaExceededError` when an account is full,
 * `FencedError` when an owned write carries a stale epoch. Everything else is a store failure.
 */
export interface Store {
  readonly kind: 'sqlite' | 'mongo';
  readonly accounts: AccountRepository;
  readonly instances: InstanceRepository;
  readonly webhooks: WebhookRepository;
  readonly ownedState: OwnedStateRepository;
  /** The embedded mode's durable webhook outbox. */
  readonly deliveries: DeliveryRepository;
  /** The chat history (GET /api/chat/history), kept for MESSAGE_RETENTION_DAYS. */
  readonly messages: MessageRepository;
  /** Each account's webhook for Enterprise events. */
  readonly accountWebhooks: AccountWebhookRepository;
  /** The billing events recorded once each (the cron's idempotency ledger). */
  readonly billingLedger: BillingLedgerRepository;
  /** Received files kept for a while for base64 deliveries (when no Redis holds them) and catch-up. */
  readonly mediaBlobs: MediaBlobRepository;
  /** Chatbot bots and each instance's integration link (configuration; deleted with the instance). */
  readonly chatbots: ChatbotRepository;
  /** Resolves when the store answers; used by /health. */
  ping(): Promise<void>;
  close(): Promise<void>;
}

export interface AccountRepository {
  /** @throws ConflictError when the name or token hash is taken. */
  create(account: AccountRecord): Promise<void>;
  findById(id: string): Promise<AccountRecord | undefined>;
  findByName(name: string): Promise<AccountRecord | undefined>;
  findByTokenHash(tokenHash: string): Promise<AccountRecord | undefined>;
  list(): Promise<AccountRecord[]>;
  /** Replaces the token hash (the old token stops working at once). False when no such account. */
  replaceTokenHash(name: string, tokenHash: string): Promise<boolean>;
  /** Disables the account (`disabledAt` set) or enables it (undefined); the updated record, or undefined. */
  setDisabled(name: string, disabledAt: string | undefined): Promise<AccountRecord | undefined>;
  /** Sets the account's switch for one broker (the others stay); false when no such account. */
  setBroker(id: string, broker: keyof AccountBrokers, config: BrokerConfig): Promise<boolean>;
  /**
   * Deletes the account with its account webhook and billing ledger, in one transaction with the check
   * that it holds no instance. False when no such account.
   * @throws ConflictError when it still has instances.
   */
  delete(id: string): Promise<boolean>;
  count(): Promise<number>;
}

export interface InstanceRepository {
  /**
   * Creates the instance and its webhooks atomically with the quota check.
   * @throws QuotaExceededError when the account already holds `quota` instances.
   * @throws ConflictError when the name (within the account) or the token is taken.
   */
  create(instance: InstanceRecord, webhooks: WebhookRecord[], quota: number): Promise<void>;
  findById(id: string): Promise<InstanceRecord | undefined>;
  findByName(accountId: string, name: string): Promise<InstanceRecord | undefined>;
  findByTokenHash(tokenHash: string): Promise<InstanceRecord | undefined>;
  /** True when some account has an instance of this name. */
  nameExists(name: string): Promise<boolean>;
  /** The account's instances by creation time; `names` narrows to those names. */
  listByAccount(accountId: string, names?: string[]): Promise<InstanceRecord[]>;
  countByAccount(accountId: string): Promise<number>;
  /**
   * Ids of every instance that has a saved link or a pending connect (what the cluster must run), except
   * those of disabled accounts.
   */
  listRunnable(): Promise<string[]>;
  /**
   * A number that changes whenever what `listRunnable` returns may have changed: an instance created or
   * deleted, a connection state entering or leaving connecting/qr/connected, the first link key saved or
   * the last removed, an account disabled or enabled. Read it before `listRunnable`: a change committed
   * between the two reads then shows as a new version at the next read.
   */
  runnableVersion(): Promise<number>;
  /** Deletes the instance with its webhooks, owned state and messages. False when it did not exist. */
  delete(id: string): Promise<boolean>;
  /** Merges `patch` into the settings atomically and returns all seven. Undefined when no such instance. */
  updateSettings(id: string, patch: Partial<InstanceSettings>): Promise<InstanceSettings | undefined>;
  /**
   * Replaces one configuration block (websocket, proxy, storage, helpdesk, chatbot) atomically; `undefined`
   * removes it. False when no such instance. With `epoch` (a block the owner keeps, like the helpdesk
   * status), the epoch check and the write are one operation.
   * @throws FencedError when `epoch` is given and is no longer the owner epoch.
   */
  updateConfigBlock<K extends ConfigBlock>(
    id: string,
    block: K,
    value: InstanceConfig[K] | undefined,
    epoch?: number,
  ): Promise<boolean>;
  /**
   * Replaces the TokenInstance (its hash, and the sealed copy the webhook envelopes carry). False when no
   * such instance. @throws ConflictError when the hash is taken.
   */
  replaceToken(id: string, tokenHash: string, tokenSealed: string): Promise<boolean>;
  /**
   * Increments the owner epoch whoever holds the instance, records `holder` (none when omitted) and
   * returns the epoch: the caller is now the only valid writer. @throws FencedError when no such instance.
   */
  claim(id: string, holder?: OwnerHolder): Promise<number>;
  /** Each existing instance's epoch and holder. */
  ownership(ids: string[]): Promise<Map<string, InstanceOwnership>>;
  /**
   * Takes each instance whose epoch is still the one given (compare-and-set): its epoch is incremented
   * and `holder` recorded. Returns the new epoch of each instance taken; the others changed meanwhile.
   */
  claimFrom(claims: { id: string; epoch: number }[], holder: OwnerHolder): Promise<Map<string, number>>;
  /** Forgets the holder, if `epoch` is still the current epoch (the epoch itself stays). */
  release(id: string, epoch: number): Promise<void>;
  /**
   * Records, by the store's clock, that `holder.node` renewed its node lease under `holder.token` just now:
   * the store's own witness that a holder lives, beside its lease in Redis, which two Redis masters at once
   * (a restarted primary not yet demoted) can each call gone.
   */
  heartbeat(holder: OwnerHolder): Promise<void>;
  /** Each of `nodes` with a heartbeat: its token and the heartbeat's age, by the store's clock. */
  heartbeats(nodes: string[]): Promise<Map<string, NodeHeartbeat>>;
  /** Deletes the node's heartbeat if it is still `holder.token`'s (a node that stops). */
  endHeartbeat(holder: OwnerHolder): Promise<void>;
  /** @throws FencedError unless `epoch` is the current owner epoch. */
  setConnection(id: string, epoch: number, connection: ConnectionInfo): Promise<void>;
}

export interface WebhookRepository {
  /**
   * Inserts or replaces the webhook with the same (instance, label). With `maxEnabled`, an enabled webhook
   * is refused (false, nothing written) when the instance's other enabled webhooks already number that
   * many; the count and the write are one transaction, so two nodes cannot both pass it.
   */
  upsert(webhook: WebhookRecord, limits?: { maxEnabled: number }): Promise<boolean>;
  list(instanceId: string): Promise<WebhookRecord[]>;
  delete(instanceId: string, label: string): Promise<boolean>;
}

/**
 * Instance-owned state (auth creds, signal keys, chatbot sessions): read by anyone, written only by the
 * owner under its epoch, each `write` in one transaction.
 */
export interface OwnedStateRepository {
  get(instanceId: string, namespace: string, key: string): Promise<string | undefined>;
  getMany(instanceId: string, namespace: string, keys: string[]): Promise<Map<string, string>>;
  /** The namespace's entries by key, or only those whose key starts with `prefix` (read by the index). */
  list(instanceId: string, namespace: string, prefix?: string): Promise<Map<string, string>>;
  /** Applies every op or none. @throws FencedError unless `epoch` is current. */
  write(instanceId: string, epoch: number, ops: OwnedStateOp[]): Promise<void>;
  /** Deletes a whole namespace (or all of the instance's state) under the epoch. */
  clear(instanceId: string, epoch: number, namespace?: string): Promise<void>;
}

/** A webhook delivery as the outbox keeps it (`payload` is the rest of the delivery, as JSON). */
export interface DeliveryRow {
  id: string;
  instanceId: string;
  payload: string;
  attempts: number;
  lastError: string | undefined;
  createdAt: string;
  updatedAt: string;
}

/** What became of a taken delivery: sent (the row goes), to be tried again at `dueAt`, or given up on. */
export type DeliverySettlement =
  | { id: string; outcome: 'completed' }
  | { id: string; outcome: 'rescheduled'; dueAt: number; attempts: number; lastError: string }
  | { id: string; outcome: 'buried'; attempts: number; lastError: string };

/**
 * Marks a message's event as emitted (`at`, Unix ms), the network delivering a message again when its
 * receipt was lost. Without `owed` the emitting owner hands the message to the extensions itself; with
 * `owed` (the message for them, as JSON) the debt stays until the extensions took the message, and an owner
 * that lost the instance first leaves it to the next (MessageRepository.owed / settleOwed).
 */
export interface EmissionClaim {
  instanceId: string;
  messageId: string;
  at: number;
  owed?: string;
}

/**
 * The webhook outbox: pending rows are taken with a lease (so another process can take them again if
 * the taker dies), then settled: completed (deleted), rescheduled, or buried (kept as dead letters).
 */
export interface DeliveryRepository {
  /**
   * All the rows in one write (one transaction where the store has them). A row whose id is already there
   * is left as it is: a producer that queues again after a crash (same id) queues once.
   */
  insert(rows: DeliveryRow[], dueAt: number): Promise<void>;
  /**
   * A message's event: its rows (none when nothing wants it) and the message's emitted mark in one
   * transaction, unless an event of that message was queued before (then nothing is written: false). Two
   * owners of one message (a node salvaging what it decrypted, its successor receiving it again) queue it
   * once, and a crash cannot leave it queued and unmarked. A message the history lacks is queued unmarked.
   */
  insertOnce(rows: DeliveryRow[], dueAt: number, claim: EmissionClaim): Promise<boolean>;
  /** Up to `max` pending rows due at `now` and not leased, leased until `now + leaseMs`. */
  take(now: number, max: number, leaseMs: number): Promise<DeliveryRow[]>;
  /** All the settlements in one write (one transaction where the store has them). */
  settle(settlements: DeliverySettlement[]): Promise<void>;
  listDead(instanceId: string): Promise<DeliveryRow[]>;
  /** Dead rows of the instance (all, or those ids) become pending with zero attempts; returns how many. */
  revive(instanceId: string, ids: string[] | undefined, now: number): Promise<number>;
  countPending(): Promise<number>;
}

/**
 * The chat history. Written by the instance's owner as the network reports messages (an upsert by id, so
 * a message reported twice, or by a stale owner, is stored once); read by any node; pruned by age.
 */
export interface MessageRepository {
  /** Inserts the message, or replaces the one with the same (instance, id). */
  save(message: MessageRecord): Promise<void>;
  find(instanceId: string, id: string): Promise<MessageRecord | undefined>;
  /** Newest first, optionally of one chat, strictly older than `before`. */
  list(
    instanceId: string,
    query: { chatJid?: string; before?: HistoryCursor; limit: number },
  ): Promise<MessageRecord[]>;
  delete(instanceId: string, id: string): Promise<boolean>;
  /** Every message of one chat; returns how many. */
  clearChat(instanceId: string, chatJid: string): Promise<number>;
  /**
   * The instance's chats, the most recently active first: each chat's newest message time and how many
   * received messages are not read yet. `before` continues after a chat of an earlier page.
   */
  chats(instanceId: string, q: { before?: ChatCursor; limit: number }): Promise<ChatSummary[]>;
  /** Messages owed to the extensions (their JSON), oldest first, at most `limit`. */
  owed(instanceId: string, limit: number): Promise<{ id: string; owed: string }[]>;
  /** Whether a message is still owed to the extensions. */
  isOwed(instanceId: string, id: string): Promise<boolean>;
  /** Ends a message's debt, the extensions having taken it: true if it was still owed. */
  settleOwed(instanceId: string, id: string): Promise<boolean>;
  /** Moves the messages' status forward (never back, by MESSAGE_STATUS_RANK); unknown ids are ignored. */
  setStatus(instanceId: string, ids: string[], status: MessageStatus): Promise<void>;
  /** Deletes every message (of every instance) older than `before` (Unix ms); returns how many. */
  prune(before: number): Promise<number>;
}

export interface AccountWebhookRepository {
  get(accountId: string): Promise<AccountWebhookRecord | undefined>;
  /** Inserts or replaces the account's webhook. */
  save(webhook: AccountWebhookRecord): Promise<void>;
}

/**
 * The billing ledger: `record` inserts each entry unless its key exists, leased to the recorder until
 * `leaseUntil`, in one write (a tick due 100,000 events wrote them one transaction each, and the other
 * processes' writes on one SQLite file waited behind them); an entry whose delivery was not queued (its
 * recorder died) is taken again with `takeUnsent` once its lease has run out.
 */
export interface BillingLedgerRepository {
  /** The keys of the entries inserted (the others existed already). */
  record(entries: BillingLedgerEntry[], leaseUntil: number): Promise<Set<string>>;
  /** Up to `max` unsent entries whose lease ran out at `now`, leased until `now + leaseMs`. */
  takeUnsent(now: number, max: number, leaseMs: number): Promise<BillingLedgerEntry[]>;
  markSent(keys: string[], at: string): Promise<void>;
  /** Every entry of the account, oldest first (for tests and support). */
  list(accountId: string): Promise<BillingLedgerEntry[]>;
}

/**
 * Received media kept until an expiry (the embedded mode's copy for base64 webhook deliveries and
 * GET /api/chat/media). Deleted with their instance; expired ones are never returned and are pruned.
 */
export interface MediaBlobRepository {
  /** Inserts or replaces the file of (instance, message). */
  put(blob: MediaBlob): Promise<void>;
  /** The file unless it expired before `now` (Unix ms). */
  get(instanceId: string, messageId: string, now: number): Promise<Buffer | undefined>;
  /** Deletes every file expired before `now`; returns how many. */
  prune(now: number): Promise<number>;
}

/**
 * Chatbot bots and integration links. A bot whose trigger key (chatbotTriggerKey) is already taken in its
 * instance is refused with ConflictError, on insert and on update alike.
 */
export interface ChatbotRepository {
  /** The instance's bots, oldest first. */
  listBots(instanceId: string): Promise<ChatbotBotRecord[]>;
  getBot(instanceId: string, botId: string): Promise<ChatbotBotRecord | undefined>;
  /** @throws ConflictError when the bot id or its trigger key is taken. */
  insertBot(bot: ChatbotBotRecord): Promise<void>;
  /** Replaces the bot with the same (instance, botId). False when there is none. @throws ConflictError */
  updateBot(bot: ChatbotBotRecord): Promise<boolean>;
  deleteBot(instanceId: string, botId: string): Promise<boolean>;
  /** Deletes every bot of the instance; returns how many. */
  deleteAllBots(instanceId: string): Promise<number>;
  getLink(instanceId: string): Promise<ChatbotLinkRecord | undefined>;
  /**
   * Saves the link only if the stored one still has version `expected` (`undefined`: only if there is none),
   * as version `expected + 1` (or 1), compared and set in one operation. False when another write came first:
   * the caller reads again, so a link deleted meanwhile is never brought back.
   */
  saveLink(link: Omit<ChatbotLinkRecord, 'version'>, expected: number | undefined): Promise<boolean>;
  deleteLink(instanceId: string): Promise<boolean>;
}
