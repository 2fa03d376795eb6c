import type { AnyBulkWriteOperation, Collection, Filter } from 'mongodb';
import { FencedError } from '../../errors.js';
import type { OwnedStateOp } from '../records.js';
import type { OwnedStateRepository } from '../store.js';

import { isDuplicateKey } from './mongo-docs.js';
import type { InstanceDoc, OwnedStateDoc } from './mongo-docs.js';

export class MongoOwnedState implements OwnedStateRepository {
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
