import { MongoClient, MongoServerError } from 'mongodb';
import type { AnyBulkWriteOperation, Collection, Db, Document, Filter, UpdateFilter } from 'mongodb';
import { ConflictError, FencedError, QuotaExceededError } from '../../errors.js';
import { DEFAULT_SETTINGS } from '../records.js';
import type {
  AccountRecord,
  ConnectionInfo,
  InstanceConfig,
  InstanceRecord,
  InstanceSettings,
  OwnedStateOp,
  WebhookRecord,
} from '../records.js';
import type {
  AccountRepository,
  AccountWebhookRepository,
  BillingLedgerRepository,
  ChatbotRepository,
  ConfigBlock,
  InstanceRepository,
  MediaBlobRepository,
  MessageRepository,
  OwnedStateRepository,
  Store,
  WebhookRepository,
} from '../store.js';
import { startMessagePruning } from '../message-retention.js';
import { AUTH_NAMESPACE } from '../namespaces.js';
import { MongoAccountWebhooks, MongoBillingLedger } from './mongo-billing.js';
import { MongoChatbots } from './mongo-chatbots.js';
import { MongoDeliveries } from './mongo-deliveries.js';
import { MongoMediaBlobs } from './mongo-media-blobs.js';
import { MongoMessages } from './mongo-messages.js';

/** `instanceCount` is reserved before an instance insert so the quota check is atomic. */
type AccountDoc = Omit<AccountRecord, 'id'> & { _id: string; instanceCount: number };
type InstanceDoc = Omit<InstanceRecord, 'id'> & { _id: string };
type WebhookDoc = Omit<WebhookRecord, 'authorizationSealed'> & { _id: string; authorizationSealed: string | null };

interface OwnedStateDoc {
  instanceId: string;
  namespace: string;
  key: string;
  value: string;
  /** Owner epoch of the last write; a writer may only touch documents at or below its own epoch. */
  epoch: number;
}

const RUNNING_STATES = ['connecting', 'qr', 'connected'];
const SETTING_FIELDS = Object.keys(DEFAULT_SETTINGS) as (keyof InstanceSettings)[];

/** BSON stores `undefined` as null; records use `undefined` for absent optional fields. */
function nullToUndefined<T>(value: T): T {
  if (value === null) return undefined as T;
  if (Array.isArray(value)) return value.map((v: unknown) => nullToUndefined(v)) as T;
  if (typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, nullToUndefined(v as unknown)])) as T;
  }
  return value;
}

function toAccount(d: AccountDoc): AccountRecord {
  return {
    id: d._id,
    name: d.name,
    tokenHash: d.tokenHash,
    instanceQuota: d.instanceQuota,
    allowedOrigins: d.allowedOrigins,
    createdAt: d.createdAt,
  };
}

function toInstance(d: InstanceDoc): InstanceRecord {
  return {
    id: d._id,
    accountId: d.accountId,
    name: d.name,
    tokenHash: d.tokenHash,
    tokenSealed: d.tokenSealed,
    ownerEpoch: d.ownerEpoch,
    config: nullToUndefined(d.config),
    connection: nullToUndefined(d.connection),
    createdAt: d.createdAt,
  };
}

function toWebhook(d: WebhookDoc): WebhookRecord {
  return {
    instanceId: d.instanceId,
    label: d.label,
    enabled: d.enabled,
    url: d.url,
    authorizationSealed: d.authorizationSealed ?? undefined,
    byEvents: d.byEvents,
    events: d.events,
    base64: d.base64,
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

const webhookId = (instanceId: string, label: string): string => `${instanceId}\u0000${label}`;

/** Upsert that keeps the `createdAt` of an existing webhook, like the SQLite ON CONFLICT clause. */
function webhookUpsert(w: WebhookRecord): { filter: Filter<WebhookDoc>; update: UpdateFilter<WebhookDoc> } {
  const { createdAt, ...fields } = w;
  return {
    filter: { _id: webhookId(w.instanceId, w.label) },
    update: { $set: { ...fields, authorizationSealed: w.authorizationSealed ?? null }, $setOnInsert: { createdAt } },
  };
}

function isDuplicateKey(err: unknown): err is MongoServerError {
  return err instanceof MongoServerError && err.code === 11000;
}

/** Names of the fields of the unique index a duplicate-key error hit (keyPattern, else the index name). */
function duplicateKeyFields(err: MongoServerError): string[] {
  const pattern: unknown = err.keyPattern ?? err.errorResponse.keyPattern;
  if (pattern !== null && typeof pattern === 'object') return Object.keys(pattern);
  return /index: (\S+)/.exec(err.message)?.[1]?.split('_') ?? [];
}

/**
 * MongoDB store (official driver). Without multi-document transactions (a standalone server has none),
 * the quota is an atomic counter on the account and owned state is fenced per document by epoch.
 */
export class MongoStore implements Store {
  readonly kind = 'mongo' as const;
  readonly accounts: AccountRepository;
  readonly instances: InstanceRepository;
  readonly webhooks: WebhookRepository;
  readonly ownedState: OwnedStateRepository;
  readonly deliveries: MongoDeliveries;
  readonly messages: MessageRepository;
  readonly accountWebhooks: AccountWebhookRepository;
  readonly billingLedger: BillingLedgerRepository;
  readonly mediaBlobs: MediaBlobRepository;
  readonly chatbots: ChatbotRepository;
  readonly #client: MongoClient;
  readonly #db: Db;
  #stopPruning: () => void = () => undefined;

  private constructor(client: MongoClient, db: Db) {
    this.#client = client;
    this.#db = db;
    const accounts = db.collection<AccountDoc>('accounts');
    const instances = db.collection<InstanceDoc>('instances');
    const webhooks = db.collection<WebhookDoc>('webhooks');
    const ownedState = db.collection<OwnedStateDoc>('owned_state');
    this.accounts = new MongoAccounts(accounts);
    this.deliveries = new MongoDeliveries(db);
    const messages = new MongoMessages(db);
    this.messages = messages;
    this.accountWebhooks = new MongoAccountWebhooks(db);
    this.billingLedger = new MongoBillingLedger(db);
    const mediaBlobs = new MongoMediaBlobs(db);
    this.mediaBlobs = mediaBlobs;
    const chatbots = new MongoChatbots(db);
    this.chatbots = chatbots;
    this.instances = new MongoInstances(
      accounts,
      instances,
      webhooks,
      ownedState,
      this.deliveries,
      messages,
      mediaBlobs,
      chatbots,
    );
    this.webhooks = new MongoWebhooks(webhooks);
    this.ownedState = new MongoOwnedState(instances, ownedState);
  }

  /** `messageRetentionDays` > 0 prunes the history about every hour. */
  static async connect(
    url: string,
    dbName: string,
    options: { messageRetentionDays?: number } = {},
  ): Promise<MongoStore> {
    // ignoreUndefined false: absent optional fields are kept as null so record keys round-trip.
    const client = new MongoClient(url, { serverSelectionTimeoutMS: 5000, ignoreUndefined: false });
    try {
      await client.connect();
      const store = new MongoStore(client, client.db(dbName));
      await store.#createIndexes();
      store.#stopPruning = startMessagePruning(store.messages, options.messageRetentionDays ?? 0);
      return store;
    } catch (err) {
      await client.close();
      throw err;
    }
  }

  async #createIndexes(): Promise<void> {
    const db = this.#db;
    await db.collection('accounts').createIndexes([
      { key: { name: 1 }, name: 'name', unique: true },
      { key: { tokenHash: 1 }, name: 'tokenHash', unique: true },
    ]);
    await db.collection('instances').createIndexes([
      { key: { accountId: 1, name: 1 }, name: 'accountId_name', unique: true },
      { key: { tokenHash: 1 }, name: 'tokenHash', unique: true },
      { key: { name: 1 }, name: 'name' },
    ]);
    await db
      .collection('webhooks')
      .createIndexes([{ key: { instanceId: 1, createdAt: 1, label: 1 }, name: 'instanceId' }]);
    await db
      .collection('owned_state')
      .createIndexes([
        { key: { instanceId: 1, namespace: 1, key: 1 }, name: 'instanceId_namespace_key', unique: true },
      ]);
    await MongoDeliveries.createIndexes(db);
    await MongoMessages.createIndexes(db);
    await MongoBillingLedger.createIndexes(db);
    await MongoMediaBlobs.createIndexes(db);
    await MongoChatbots.createIndexes(db);
  }

  async ping(): Promise<void> {
    await this.#db.command({ ping: 1 });
  }

  async close(): Promise<void> {
    this.#stopPruning();
    await this.#client.close();
  }
}

class MongoAccounts implements AccountRepository {
  constructor(private readonly col: Collection<AccountDoc>) {}

  async create(a: AccountRecord): Promise<void> {
    try {
      const { id, ...fields } = a;
      await this.col.insertOne({ _id: id, ...fields, instanceCount: 0 });
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError('Account already exists');
      throw err;
    }
  }

  async #one(filter: Filter<AccountDoc>): Promise<AccountRecord | undefined> {
    const doc = await this.col.findOne(filter);
    return doc ? toAccount(doc) : undefined;
  }

  async findById(id: string) {
    return this.#one({ _id: id });
  }

  async findByName(name: string) {
    return this.#one({ name });
  }

  async findByTokenHash(tokenHash: string) {
    return this.#one({ tokenHash });
  }

  async list(): Promise<AccountRecord[]> {
    const docs = await this.col.find().sort({ createdAt: 1, name: 1 }).toArray();
    return docs.map(toAccount);
  }

  async replaceTokenHash(name: string, tokenHash: string): Promise<boolean> {
    const res = await this.col.updateOne({ name }, { $set: { tokenHash } });
    return res.matchedCount === 1;
  }

  async count(): Promise<number> {
    return this.col.countDocuments();
  }
}

class MongoInstances implements InstanceRepository {
  constructor(
    private readonly accounts: Collection<AccountDoc>,
    private readonly col: Collection<InstanceDoc>,
    private readonly webhooks: Collection<WebhookDoc>,
    private readonly ownedState: Collection<OwnedStateDoc>,
    private readonly deliveries: MongoDeliveries,
    private readonly messages: MongoMessages,
    private readonly mediaBlobs: MongoMediaBlobs,
    private readonly chatbots: MongoChatbots,
  ) {}

  async create(i: InstanceRecord, webhooks: WebhookRecord[], quota: number): Promise<void> {
    const slot = await this.accounts.findOneAndUpdate(
      { _id: i.accountId, instanceCount: { $lt: quota } },
      { $inc: { instanceCount: 1 } },
    );
    if (!slot) throw new QuotaExceededError();
    const release = async () => {
      await this.accounts.updateOne({ _id: i.accountId }, { $inc: { instanceCount: -1 } });
    };
    try {
      const { id, ...fields } = i;
      await this.col.insertOne({ _id: id, ...fields });
    } catch (err) {
      await release();
      if (isDuplicateKey(err)) {
        const clash = duplicateKeyFields(err);
        if (clash.includes('tokenHash')) throw new ConflictError('Instance token already in use');
        if (clash.includes('name')) throw new ConflictError('Instance name already exists');
      }
      throw err;
    }
    if (webhooks.length === 0) return;
    try {
      await this.webhooks.bulkWrite(
        webhooks.map((w) => ({ updateOne: { ...webhookUpsert(w), upsert: true } })),
        { ordered: true },
      );
    } catch (err) {
      await this.webhooks.deleteMany({ instanceId: i.id });
      await this.col.deleteOne({ _id: i.id });
      await release();
      throw err;
    }
  }

  async #one(filter: Filter<InstanceDoc>): Promise<InstanceRecord | undefined> {
    const doc = await this.col.findOne(filter);
    return doc ? toInstance(doc) : undefined;
  }

  async findById(id: string) {
    return this.#one({ _id: id });
  }

  async findByName(accountId: string, name: string) {
    return this.#one({ accountId, name });
  }

  async findByTokenHash(tokenHash: string) {
    return this.#one({ tokenHash });
  }

  async nameExists(name: string): Promise<boolean> {
    return (await this.col.findOne({ name }, { projection: { _id: 1 } })) !== null;
  }

  async listByAccount(accountId: string, names?: string[]): Promise<InstanceRecord[]> {
    if (names && names.length === 0) return [];
    const filter: Filter<InstanceDoc> = names ? { accountId, name: { $in: names } } : { accountId };
    const docs = await this.col.find(filter).sort({ createdAt: 1, name: 1 }).toArray();
    return docs.map(toInstance);
  }

  async countByAccount(accountId: string): Promise<number> {
    return this.col.countDocuments({ accountId });
  }

  async listRunnable(): Promise<string[]> {
    // let/$expr form of $lookup: the localField+pipeline form needs MongoDB 5.0, the driver supports 4.4.
    const pipeline: Document[] = [
      { $project: { state: '$connection.state' } },
      {
        $lookup: {
          from: this.ownedState.collectionName,
          let: { id: '$_id' },
          pipeline: [
            { $match: { namespace: AUTH_NAMESPACE, $expr: { $eq: ['$instanceId', '$$id'] } } },
            { $limit: 1 },
            { $project: { _id: 1 } },
          ],
          as: 'auth',
        },
      },
      { $match: { $or: [{ state: { $in: RUNNING_STATES } }, { 'auth.0': { $exists: true } }] } },
      { $sort: { _id: 1 } },
      { $project: { _id: 1 } },
    ];
    const docs = await this.col.aggregate<{ _id: string }>(pipeline).toArray();
    return docs.map((d) => d._id);
  }

  async delete(id: string): Promise<boolean> {
    // The instance goes first so its owner is fenced at once; children are always cleared so a retry
    // after a partial failure still removes them.
    const doc = await this.col.findOneAndDelete({ _id: id });
    await this.ownedState.deleteMany({ instanceId: id });
    await this.webhooks.deleteMany({ instanceId: id });
    await this.deliveries.forgetDead(id);
    await this.messages.forgetInstance(id);
    await this.mediaBlobs.forgetInstance(id);
    await this.chatbots.forgetInstance(id);
    if (!doc) return false;
    await this.accounts.updateOne({ _id: doc.accountId }, { $inc: { instanceCount: -1 } });
    return true;
  }

  async updateSettings(id: string, patch: Partial<InstanceSettings>): Promise<InstanceSettings | undefined> {
    const set: Record<string, unknown> = {};
    for (const field of SETTING_FIELDS) {
      if (patch[field] !== undefined) set[`config.settings.${field}`] = patch[field];
    }
    const projection = { 'config.settings': 1 };
    // Mongo rejects an empty $set, so an empty patch is a plain read.
    const doc =
      Object.keys(set).length === 0
        ? await this.col.findOne({ _id: id }, { projection })
        : await this.col.findOneAndUpdate({ _id: id }, { $set: set }, { returnDocument: 'after', projection });
    return doc ? nullToUndefined(doc.config.settings) : undefined;
  }

  async updateConfigBlock<K extends ConfigBlock>(
    id: string,
    block: K,
    value: InstanceConfig[K] | undefined,
  ): Promise<boolean> {
    const path = `config.${block}`;
    const update: UpdateFilter<InstanceDoc> =
      value === undefined ? { $unset: { [path]: '' } } : { $set: { [path]: value } };
    const res = await this.col.updateOne({ _id: id }, update);
    return res.matchedCount === 1;
  }

  async claim(id: string): Promise<number> {
    const doc = await this.col.findOneAndUpdate(
      { _id: id },
      { $inc: { ownerEpoch: 1 } },
      { returnDocument: 'after', projection: { ownerEpoch: 1 } },
    );
    if (!doc) throw new FencedError(id, 0);
    return doc.ownerEpoch;
  }

  async setConnection(id: string, epoch: number, connection: ConnectionInfo): Promise<void> {
    const res = await this.col.updateOne({ _id: id, ownerEpoch: epoch }, { $set: { connection } });
    if (res.matchedCount === 0) throw new FencedError(id, epoch);
  }
}

class MongoWebhooks implements WebhookRepository {
  constructor(private readonly col: Collection<WebhookDoc>) {}

  async upsert(w: WebhookRecord): Promise<void> {
    const { filter, update } = webhookUpsert(w);
    await this.col.updateOne(filter, update, { upsert: true });
  }

  async list(instanceId: string): Promise<WebhookRecord[]> {
    const docs = await this.col.find({ instanceId }).sort({ createdAt: 1, label: 1 }).toArray();
    return docs.map(toWebhook);
  }

  async delete(instanceId: string, label: string): Promise<boolean> {
    const res = await this.col.deleteOne({ _id: webhookId(instanceId, label) });
    return res.deletedCount === 1;
  }
}

/**
 * Standalone MongoDB has no multi-document transactions, so a write is fenced twice: every document
 * carries the epoch that wrote it and only a writer at or above that epoch may change it, and the owner
 * epoch is checked before and after the batch. A stale writer can thus only touch documents the new
 * owner has not written yet, and learns it is fenced right after. A batch that fails for another
 * reason (network, server) may be partly applied; `ordered` keeps it a prefix of the ops.
 */
class MongoOwnedState implements OwnedStateRepository {
  constructor(
    private readonly instances: Collection<InstanceDoc>,
    private readonly col: Collection<OwnedStateDoc>,
  ) {}

  async get(instanceId: string, namespace: string, key: string): Promise<string | undefined> {
    const doc = await this.col.findOne({ instanceId, namespace, key }, { projection: { value: 1 } });
    return doc?.value;
  }

  async getMany(instanceId: string, namespace: string, keys: string[]): Promise<Map<string, string>> {
    if (keys.length === 0) return new Map();
    const docs = await this.col
      .find({ instanceId, namespace, key: { $in: keys } }, { projection: { key: 1, value: 1 } })
      .toArray();
    return new Map(docs.map((d) => [d.key, d.value]));
  }

  async list(instanceId: string, namespace: string): Promise<Map<string, string>> {
    const docs = await this.col
      .find({ instanceId, namespace }, { projection: { key: 1, value: 1 } })
      .sort({ key: 1 })
      .toArray();
    return new Map(docs.map((d) => [d.key, d.value]));
  }

  async #checkEpoch(instanceId: string, epoch: number): Promise<void> {
    const doc = await this.instances.findOne({ _id: instanceId }, { projection: { ownerEpoch: 1 } });
    if (doc?.ownerEpoch !== epoch) throw new FencedError(instanceId, epoch);
  }

  async write(instanceId: string, epoch: number, ops: OwnedStateOp[]): Promise<void> {
    await this.#checkEpoch(instanceId, epoch);
    if (ops.length > 0) {
      const bulk = ops.map((op): AnyBulkWriteOperation<OwnedStateDoc> => {
        const filter = { instanceId, namespace: op.namespace, key: op.key, epoch: { $lte: epoch } };
        if (op.value === null) return { deleteOne: { filter } };
        return { updateOne: { filter, update: { $set: { value: op.value, epoch } }, upsert: true } };
      });
      for (let attempt = 1; ; attempt++) {
        try {
          await this.col.bulkWrite(bulk, { ordered: true });
          break;
        } catch (err) {
          if (!isDuplicateKey(err)) throw err;
          // An upsert missed and clashed on the unique index: the document holds a newer epoch (then the
          // owner epoch has moved too) or a same-epoch upsert raced ours, which one replay resolves.
          await this.#checkEpoch(instanceId, epoch);
          if (attempt === 2) throw new FencedError(instanceId, epoch);
        }
      }
    }
    await this.#checkEpoch(instanceId, epoch);
  }

  async clear(instanceId: string, epoch: number, namespace?: string): Promise<void> {
    await this.#checkEpoch(instanceId, epoch);
    const filter: Filter<OwnedStateDoc> = { instanceId, epoch: { $lte: epoch } };
    if (namespace !== undefined) filter.namespace = namespace;
    await this.col.deleteMany(filter);
    await this.#checkEpoch(instanceId, epoch);
  }
}
