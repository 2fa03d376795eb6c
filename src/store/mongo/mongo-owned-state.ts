import type { AnyBulkWriteOperation, ClientSession, Collection, Filter, MongoClient } from 'mongodb';
import { FencedError } from '../../errors.js';
import type { OwnedStateOp } from '../records.js';
import type { OwnedStateRepository } from '../store.js';

import { prefixEnd } from '../key-prefix.js';
import { AUTH_NAMESPACE } from '../namespaces.js';
import { RUNNING_STATES } from './mongo-docs.js';
import type { InstanceDoc, OwnedStateDoc } from './mongo-docs.js';
import type { MongoRunnableVersion } from './mongo-runnable-version.js';
import { inTransaction } from './mongo-transaction.js';

/** An instance's owned state: every write checks the owner epoch and writes in one transaction. */
export class MongoOwnedState implements OwnedStateRepository {
  constructor(
    private readonly client: MongoClient,
    private readonly instances: Collection<InstanceDoc>,
    private readonly col: Collection<OwnedStateDoc>,
    private readonly runnable: MongoRunnableVersion,
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

  async list(instanceId: string, namespace: string, prefix?: string): Promise<Map<string, string>> {
    const filter: Filter<OwnedStateDoc> = prefix
      ? { instanceId, namespace, key: { $gte: prefix, $lt: prefixEnd(prefix) } }
      : { instanceId, namespace };
    const docs = await this.col
      .find(filter, { projection: { key: 1, value: 1 } })
      .sort({ key: 1 })
      .toArray();
    return new Map(docs.map((d) => [d.key, d.value]));
  }

  /**
   * Runs `work` in one transaction that first touches the instance document under the writer's epoch: a
   * claim (which increments the epoch) conflicts with it, so either the claim comes first and this write
   * is refused, or this write commits whole before the claim. Never part of a batch, never a stale write.
   */
  async #fenced(instanceId: string, epoch: number, work: (session: ClientSession) => Promise<void>): Promise<void> {
    await inTransaction(this.client, async (session) => {
      const owner = await this.instances.updateOne(
        { _id: instanceId, ownerEpoch: epoch },
        { $inc: { ownedWrites: 1 } },
        { session },
      );
      if (owner.matchedCount === 0) throw new FencedError(instanceId, epoch);
      await work(session);
    });
  }

  async write(instanceId: string, epoch: number, ops: OwnedStateOp[]): Promise<void> {
    await this.#fenced(instanceId, epoch, async (session) => {
      if (ops.length === 0) return;
      const bulk = ops.map((op): AnyBulkWriteOperation<OwnedStateDoc> => {
        const filter = { instanceId, namespace: op.namespace, key: op.key };
        if (op.value === null) return { deleteOne: { filter } };
        return { updateOne: { filter, update: { $set: { value: op.value, epoch } }, upsert: true } };
      });
      const res = await this.col.bulkWrite(bulk, { ordered: true, session });
      // The first link key saved or the last removed changes the runnable set (as SQLite's triggers).
      const linkOps = new Set(ops.flatMap((op, i) => (op.namespace === AUTH_NAMESPACE ? [i] : [])));
      if (linkOps.size === 0) return;
      const added = Object.keys(res.upsertedIds).filter((i) => linkOps.has(Number(i))).length;
      const removed = ops.some((op) => op.namespace === AUTH_NAMESPACE && op.value === null) && res.deletedCount > 0;
      if (!added && !removed) return;
      const left = await this.col.countDocuments(
        { instanceId, namespace: AUTH_NAMESPACE },
        { limit: added + 1, session },
      );
      if ((added && left === added) || (removed && left === 0)) await this.#linkChanged(instanceId, session);
    });
  }

  async clear(instanceId: string, epoch: number, namespace?: string): Promise<void> {
    await this.#fenced(instanceId, epoch, async (session) => {
      const filter: Filter<OwnedStateDoc> = { instanceId };
      if (namespace !== undefined) filter.namespace = namespace;
      const linked = await this.col.findOne({ instanceId, namespace: AUTH_NAMESPACE }, { session });
      await this.col.deleteMany(filter, { session });
      if (linked && (namespace === undefined || namespace === AUTH_NAMESPACE)) {
        await this.#linkChanged(instanceId, session);
      }
    });
  }

  /** A link saved or removed changes the runnable set unless the connection state keeps the instance running. */
  async #linkChanged(instanceId: string, session: ClientSession): Promise<void> {
    const running = await this.instances.findOne(
      { _id: instanceId, 'connection.state': { $in: RUNNING_STATES } },
      { session, projection: { _id: 1 } },
    );
    if (!running) await this.runnable.bump(session);
  }
}
