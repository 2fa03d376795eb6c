import type { Collection, Db, Filter, MongoClient } from 'mongodb';
import { ConflictError } from '../../errors.js';
import type { AccountBrokers, AccountRecord, BrokerConfig } from '../records.js';
import type { AccountRepository } from '../store.js';

import { isDuplicateKey } from './mongo-docs.js';
import type { AccountDoc, InstanceDoc } from './mongo-docs.js';
import type { MongoRunnableVersion } from './mongo-runnable-version.js';
import { inTransaction } from './mongo-transaction.js';

function toAccount(d: AccountDoc): AccountRecord {
  return {
    id: d._id,
    name: d.name,
    tokenHash: d.tokenHash,
    instanceQuota: d.instanceQuota,
    allowedOrigins: d.allowedOrigins,
    createdAt: d.createdAt,
    ...(d.disabledAt ? { disabledAt: d.disabledAt } : {}),
    ...(d.brokers ? { brokers: d.brokers } : {}),
  };
}

export class MongoAccounts implements AccountRepository {
  constructor(
    private readonly client: MongoClient,
    private readonly col: Collection<AccountDoc>,
    private readonly instances: Collection<InstanceDoc>,
    private readonly db: Db,
    private readonly runnable: MongoRunnableVersion,
  ) {}

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

  async setDisabled(name: string, disabledAt: string | undefined): Promise<AccountRecord | undefined> {
    const update = disabledAt === undefined ? { $unset: { disabledAt: '' as const } } : { $set: { disabledAt } };
    // With the runnable version's bump: the account's instances stop (or may run again).
    const doc = await inTransaction(this.client, async (session) => {
      const updated = await this.col.findOneAndUpdate({ name }, update, { returnDocument: 'after', session });
      if (updated) await this.runnable.bump(session);
      return updated;
    });
    return doc ? toAccount(doc) : undefined;
  }

  async setBroker(id: string, broker: keyof AccountBrokers, config: BrokerConfig): Promise<boolean> {
    const res = await this.col.updateOne({ _id: id }, { $set: { [`brokers.${broker}`]: config } });
    return res.matchedCount === 1;
  }

  /** The check that no instance is left and every deletion in one transaction, as in SQLite. */
  async delete(id: string): Promise<boolean> {
    return inTransaction(this.client, async (session) => {
      if ((await this.instances.countDocuments({ accountId: id }, { session, limit: 1 })) > 0) {
        throw new ConflictError('Account still has instances; delete them first or use force=true');
      }
      await this.db.collection<{ accountId: string }>('billing_ledger').deleteMany({ accountId: id }, { session });
      await this.db.collection<{ _id: string }>('account_webhooks').deleteOne({ _id: id }, { session });
      return (await this.col.deleteOne({ _id: id }, { session })).deletedCount === 1;
    });
  }

  async count(): Promise<number> {
    return this.col.countDocuments();
  }
}
