import type { Collection, Filter } from 'mongodb';
import { ConflictError } from '../../errors.js';
import type { AccountRecord } from '../records.js';
import type { AccountRepository } from '../store.js';

import { isDuplicateKey } from './mongo-docs.js';
import type { AccountDoc } from './mongo-docs.js';

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

export class MongoAccounts implements AccountRepository {
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
