import type { Collection, Document, Filter, MongoClient, UpdateFilter } from 'mongodb';
import { ConflictError, FencedError, QuotaExceededError } from '../../errors.js';
import { DEFAULT_SETTINGS } from '../records.js';
import type {
  ConnectionInfo,
  InstanceConfig,
  InstanceOwnership,
  InstanceRecord,
  InstanceSettings,
  NodeHeartbeat,
  OwnerHolder,
  WebhookRecord,
} from '../records.js';
import type { ConfigBlock, InstanceRepository } from '../store.js';
import { AUTH_NAMESPACE } from '../namespaces.js';

import { RUNNING_STATES, duplicateKeyFields, isDuplicateKey, nullToUndefined } from './mongo-docs.js';
import type { AccountDoc, InstanceDoc, NodeHeartbeatDoc, OwnedStateDoc, WebhookDoc } from './mongo-docs.js';
import { webhookUpsert } from './mongo-webhooks.js';
import type { MongoDeliveries } from './mongo-deliveries.js';
import type { MongoMessages } from './mongo-messages.js';
import type { MongoMediaBlobs } from './mongo-media-blobs.js';
import type { MongoChatbots } from './mongo-chatbots.js';
import type { MongoRunnableVersion } from './mongo-runnable-version.js';
import { inTransaction } from './mongo-transaction.js';

const SETTING_FIELDS = Object.keys(DEFAULT_SETTINGS) as (keyof InstanceSettings)[];

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

export class MongoInstances implements InstanceRepository {
  constructor(
    private readonly client: MongoClient,
    private readonly accounts: Collection<AccountDoc>,
    private readonly col: Collection<InstanceDoc>,
    private readonly webhooks: Collection<WebhookDoc>,
    private readonly ownedState: Collection<OwnedStateDoc>,
    private readonly deliveries: MongoDeliveries,
    private readonly messages: MongoMessages,
    private readonly mediaBlobs: MongoMediaBlobs,
    private readonly chatbots: MongoChatbots,
    private readonly runnable: MongoRunnableVersion,
  ) {}

  /** The quota slot, the instance and its webhooks in one transaction: all of them or none. */
  async create(i: InstanceRecord, webhooks: WebhookRecord[], quota: number): Promise<void> {
    try {
      await inTransaction(this.client, async (session) => {
        const slot = await this.accounts.findOneAndUpdate(
          { _id: i.accountId, instanceCount: { $lt: quota } },
          { $inc: { instanceCount: 1 } },
          { session },
        );
        if (!slot) throw new QuotaExceededError();
        const { id, ...fields } = i;
        await this.col.insertOne({ _id: id, ...fields }, { session });
        if (RUNNING_STATES.includes(i.connection?.state ?? '')) await this.runnable.bump(session);
        if (webhooks.length === 0) return;
        await this.webhooks.bulkWrite(
          webhooks.map((w) => ({ updateOne: { ...webhookUpsert(w), upsert: true } })),
          { ordered: true, session },
        );
      });
    } catch (err) {
      if (isDuplicateKey(err)) {
        const clash = duplicateKeyFields(err);
        if (clash.includes('tokenHash')) throw new ConflictError('Instance token already in use');
        if (clash.includes('name')) throw new ConflictError('Instance name already exists');
      }
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

  async runnableVersion(): Promise<number> {
    return this.runnable.read();
  }

  async listRunnable(): Promise<string[]> {
    // let/$expr form of $lookup: the localField+pipeline form needs MongoDB 5.0, the driver supports 4.4.
    const pipeline: Document[] = [
      { $project: { state: '$connection.state', accountId: 1 } },
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
      {
        $lookup: {
          from: this.accounts.collectionName,
          let: { accountId: '$accountId' },
          pipeline: [
            { $match: { disabledAt: { $exists: true }, $expr: { $eq: ['$_id', '$$accountId'] } } },
            { $project: { _id: 1 } },
          ],
          as: 'disabled',
        },
      },
      { $match: { 'disabled.0': { $exists: false } } },
      { $sort: { _id: 1 } },
      { $project: { _id: 1 } },
    ];
    const docs = await this.col.aggregate<{ _id: string }>(pipeline).toArray();
    return docs.map((d) => d._id);
  }

  /** The instance, everything it owns and its quota slot in one transaction: deleted whole or not at all. */
  async delete(id: string): Promise<boolean> {
    return inTransaction(this.client, async (session) => {
      const doc = await this.col.findOneAndDelete({ _id: id }, { session });
      if (doc) await this.runnable.bump(session);
      await this.ownedState.deleteMany({ instanceId: id }, { session });
      await this.webhooks.deleteMany({ instanceId: id }, { session });
      await this.deliveries.forgetDead(id, session);
      await this.messages.forgetInstance(id, session);
      await this.mediaBlobs.forgetInstance(id, session);
      await this.chatbots.forgetInstance(id, session);
      if (!doc) return false;
      await this.accounts.updateOne({ _id: doc.accountId }, { $inc: { instanceCount: -1 } }, { session });
      return true;
    });
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
    epoch?: number,
  ): Promise<boolean> {
    const path = `config.${block}`;
    const update: UpdateFilter<InstanceDoc> =
      value === undefined ? { $unset: { [path]: '' } } : { $set: { [path]: value } };
    const filter = epoch === undefined ? { _id: id } : { _id: id, ownerEpoch: epoch };
    const res = await this.col.updateOne(filter, update);
    if (res.matchedCount === 1) return true;
    if (epoch !== undefined && (await this.col.countDocuments({ _id: id }, { limit: 1 })) === 1) {
      throw new FencedError(id, epoch);
    }
    return false;
  }

  async replaceToken(id: string, tokenHash: string, tokenSealed: string): Promise<boolean> {
    try {
      return (await this.col.updateOne({ _id: id }, { $set: { tokenHash, tokenSealed } })).matchedCount === 1;
    } catch (err) {
      if (isDuplicateKey(err)) throw new ConflictError('Token already in use');
      throw err;
    }
  }

  async claim(id: string, holder?: OwnerHolder): Promise<number> {
    const doc = await this.col.findOneAndUpdate(
      { _id: id },
      { $inc: { ownerEpoch: 1 }, $set: { ownerNode: holder?.node ?? null, ownerToken: holder?.token ?? null } },
      { returnDocument: 'after', projection: { ownerEpoch: 1 } },
    );
    if (!doc) throw new FencedError(id, 0);
    return doc.ownerEpoch;
  }

  async ownership(ids: string[]): Promise<Map<string, InstanceOwnership>> {
    const out = new Map<string, InstanceOwnership>();
    if (ids.length === 0) return out;
    const docs = await this.col
      .find({ _id: { $in: ids } }, { projection: { ownerEpoch: 1, ownerNode: 1, ownerToken: 1 } })
      .toArray();
    for (const d of docs) {
      out.set(d._id, {
        epoch: d.ownerEpoch,
        ...(d.ownerNode && d.ownerToken ? { holder: { node: d.ownerNode, token: d.ownerToken } } : {}),
      });
    }
    return out;
  }

  async claimFrom(claims: { id: string; epoch: number }[], holder: OwnerHolder): Promise<Map<string, number>> {
    const taken = new Map<string, number>();
    // Each a compare-and-set on the epoch, like `claim`: a concurrent owned write's transaction conflicts.
    await Promise.all(
      claims.map(async (c) => {
        const doc = await this.col.findOneAndUpdate(
          { _id: c.id, ownerEpoch: c.epoch },
          { $inc: { ownerEpoch: 1 }, $set: { ownerNode: holder.node, ownerToken: holder.token } },
          { returnDocument: 'after', projection: { ownerEpoch: 1 } },
        );
        if (doc) taken.set(c.id, doc.ownerEpoch);
      }),
    );
    return taken;
  }

  async release(id: string, epoch: number): Promise<void> {
    await this.col.updateOne({ _id: id, ownerEpoch: epoch }, { $set: { ownerNode: null, ownerToken: null } });
  }

  /** Nodes' heartbeats, stamped and aged by the server's clock (`$$NOW`): nodes on many hosts, one clock. */
  get #heartbeats(): Collection<NodeHeartbeatDoc> {
    return this.client.db(this.col.dbName).collection<NodeHeartbeatDoc>('node_heartbeats');
  }

  async heartbeat(holder: OwnerHolder): Promise<void> {
    await this.#heartbeats.updateOne({ _id: holder.node }, [{ $set: { token: holder.token, at: '$$NOW' } }], {
      upsert: true,
    });
  }

  async heartbeats(nodes: string[]): Promise<Map<string, NodeHeartbeat>> {
    const beats = new Map<string, NodeHeartbeat>();
    if (nodes.length === 0) return beats;
    const rows = await this.#heartbeats
      .aggregate<{ _id: string; token: string; ageMs: number }>([
        { $match: { _id: { $in: nodes } } },
        { $project: { token: 1, ageMs: { $subtract: ['$$NOW', '$at'] } } },
      ])
      .toArray();
    for (const r of rows) beats.set(r._id, { token: r.token, ageMs: Math.max(0, r.ageMs) });
    return beats;
  }

  async endHeartbeat(holder: OwnerHolder): Promise<void> {
    await this.#heartbeats.deleteOne({ _id: holder.node, token: holder.token });
  }

  /** In a transaction with the runnable version's bump when an unlinked instance's state starts or stops running. */
  async setConnection(id: string, epoch: number, connection: ConnectionInfo): Promise<void> {
    await inTransaction(this.client, async (session) => {
      const before = await this.col.findOneAndUpdate(
        { _id: id, ownerEpoch: epoch },
        { $set: { connection } },
        { session, returnDocument: 'before', projection: { 'connection.state': 1 } },
      );
      if (!before) throw new FencedError(id, epoch);
      const running = (state: string | undefined) => state !== undefined && RUNNING_STATES.includes(state);
      if (running(before.connection?.state) === running(connection.state)) return;
      // A linked instance is runnable whatever its state.
      if (await this.ownedState.findOne({ instanceId: id, namespace: AUTH_NAMESPACE }, { session })) return;
      await this.runnable.bump(session);
    });
  }
}
