import { MongoBulkWriteError } from 'mongodb';
import type { Collection, Db } from 'mongodb';
import type { AccountWebhookRecord, BillingLedgerEntry } from '../records.js';
import { DUPLICATE_KEY } from './mongo-docs.js';
import type { AccountWebhookRepository, BillingLedgerRepository } from '../store.js';

type AccountWebhookDoc = Omit<AccountWebhookRecord, 'accountId'> & { _id: string };
type LedgerDoc = Omit<BillingLedgerEntry, 'key' | 'sentAt'> & {
  _id: string;
  sentAt: string | null;
  leaseUntil: number;
};

const toEntry = (d: LedgerDoc): BillingLedgerEntry => ({
  key: d._id,
  accountId: d.accountId,
  event: d.event,
  description: d.description,
  data: d.data,
  createdAt: d.createdAt,
  sentAt: d.sentAt ?? undefined,
});

/** Account webhooks in MongoDB (collection `account_webhooks`, one document per account). */
export class MongoAccountWebhooks implements AccountWebhookRepository {
  readonly #col: Collection<AccountWebhookDoc>;

  constructor(db: Db) {
    this.#col = db.collection<AccountWebhookDoc>('account_webhooks');
  }

  async get(accountId: string): Promise<AccountWebhookRecord | undefined> {
    const doc = await this.#col.findOne({ _id: accountId });
    if (!doc) return undefined;
    const { _id, ...rest } = doc;
    return { accountId: _id, ...rest };
  }

  async save(w: AccountWebhookRecord): Promise<void> {
    const { accountId, createdAt, ...rest } = w;
    await this.#col.updateOne({ _id: accountId }, { $set: rest, $setOnInsert: { createdAt } }, { upsert: true });
  }
}

/** The billing ledger in MongoDB (collection `billing_ledger`): the key is `_id`, so a second insert fails. */
export class MongoBillingLedger implements BillingLedgerRepository {
  readonly #col: Collection<LedgerDoc>;

  constructor(db: Db) {
    this.#col = db.collection<LedgerDoc>('billing_ledger');
  }

  static async createIndexes(db: Db): Promise<void> {
    await db.collection('billing_ledger').createIndexes([
      { key: { sentAt: 1, leaseUntil: 1, createdAt: 1 }, name: 'unsent' },
      { key: { accountId: 1, createdAt: 1 }, name: 'account' },
    ]);
  }

  async record(entries: BillingLedgerEntry[], leaseUntil: number): Promise<Set<string>> {
    if (entries.length === 0) return new Set();
    const docs = entries.map(({ key, sentAt, ...rest }) => ({ _id: key, ...rest, sentAt: sentAt ?? null, leaseUntil }));
    try {
      await this.#col.insertMany(docs, { ordered: false });
      return new Set(docs.map((d) => d._id));
    } catch (err) {
      // Entries recorded before (another holder of the role, a tick after a crash) are left as they are.
      const errors = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
      if (errors.length === 0 || errors.some((e) => e.code !== DUPLICATE_KEY)) throw err;
      const existed = new Set(errors.map((e) => e.index));
      return new Set(docs.filter((_, i) => !existed.has(i)).map((d) => d._id));
    }
  }

  async takeUnsent(now: number, max: number, leaseMs: number): Promise<BillingLedgerEntry[]> {
    const taken: BillingLedgerEntry[] = [];
    while (taken.length < max) {
      const doc = await this.#col.findOneAndUpdate(
        { sentAt: null, leaseUntil: { $lte: now } },
        { $set: { leaseUntil: now + leaseMs } },
        { sort: { createdAt: 1 }, returnDocument: 'after' },
      );
      if (!doc) break;
      taken.push(toEntry(doc));
    }
    return taken;
  }

  async markSent(keys: string[], at: string): Promise<void> {
    if (keys.length === 0) return;
    await this.#col.updateMany({ _id: { $in: keys } }, { $set: { sentAt: at } });
  }

  async list(accountId: string): Promise<BillingLedgerEntry[]> {
    return (await this.#col.find({ accountId }).sort({ createdAt: 1, _id: 1 }).toArray()).map(toEntry);
  }
}
