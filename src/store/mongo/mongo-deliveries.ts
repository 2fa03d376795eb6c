import { MongoBulkWriteError } from 'mongodb';
import type { ClientSession, Collection, Db, MongoClient } from 'mongodb';
import { DUPLICATE_KEY } from './mongo-docs.js';
import { messageDocId } from './mongo-messages.js';
import { inTransaction } from './mongo-transaction.js';
import type { DeliveryRepository, DeliveryRow, DeliverySettlement, EmissionClaim } from '../store.js';

interface DeliveryDoc {
  _id: string;
  instanceId: string;
  status: 'pending' | 'dead';
  dueAt: number;
  leaseUntil: number;
  attempts: number;
  payload: string;
  lastError: string | null;
  createdAt: string;
  updatedAt: string;
}

const toRow = (d: DeliveryDoc): DeliveryRow => ({
  id: d._id,
  instanceId: d.instanceId,
  payload: d.payload,
  attempts: d.attempts,
  lastError: d.lastError ?? undefined,
  createdAt: d.createdAt,
  updatedAt: d.updatedAt,
});

const toDoc = (r: DeliveryRow, dueAt: number): DeliveryDoc => ({
  _id: r.id,
  instanceId: r.instanceId,
  status: 'pending',
  dueAt,
  leaseUntil: 0,
  attempts: r.attempts,
  payload: r.payload,
  lastError: r.lastError ?? null,
  createdAt: r.createdAt,
  updatedAt: r.updatedAt,
});

/** The webhook outbox in MongoDB: each take is an atomic findOneAndUpdate, so nodes never share a row. */
export class MongoDeliveries implements DeliveryRepository {
  readonly #col: Collection<DeliveryDoc>;
  readonly #messages: Collection<{ _id: string; emittedAt?: number | null; owed?: string | null }>;

  constructor(
    private readonly client: MongoClient,
    db: Db,
  ) {
    this.#col = db.collection<DeliveryDoc>('webhook_deliveries');
    this.#messages = db.collection('messages');
  }

  static async createIndexes(db: Db): Promise<void> {
    await db.collection('webhook_deliveries').createIndexes([
      { key: { status: 1, dueAt: 1, createdAt: 1 }, name: 'status_due' },
      { key: { instanceId: 1, status: 1 }, name: 'instance_status' },
    ]);
  }

  async insert(rows: DeliveryRow[], dueAt: number): Promise<void> {
    if (rows.length === 0) return;
    const inserting = this.#col.insertMany(
      rows.map((r) => toDoc(r, dueAt)),
      { ordered: false },
    );
    await inserting.catch((err: unknown) => {
      // Rows already queued under their id (a producer queueing again after a crash) are left as they are.
      const errors = err instanceof MongoBulkWriteError ? [err.writeErrors].flat() : [];
      if (errors.length === 0 || errors.some((e) => e.code !== DUPLICATE_KEY)) throw err;
    });
  }

  async insertOnce(rows: DeliveryRow[], dueAt: number, claim: EmissionClaim): Promise<boolean> {
    const _id = messageDocId(claim.instanceId, claim.messageId);
    return inTransaction(this.client, async (session) => {
      const message = await this.#messages.findOne({ _id }, { session, projection: { emittedAt: 1 } });
      if (message?.emittedAt != null) return false;
      if (message) {
        await this.#messages.updateOne(
          { _id },
          { $set: { emittedAt: claim.at, owed: claim.owed ?? null } },
          { session },
        );
      }
      // Fresh ids only (a message's event is queued once), so no duplicate key aborts the transaction.
      const docs = rows.map((r) => toDoc(r, dueAt));
      if (docs.length > 0) await this.#col.insertMany(docs, { session });
      return true;
    });
  }

  async take(now: number, max: number, leaseMs: number): Promise<DeliveryRow[]> {
    const taken: DeliveryRow[] = [];
    while (taken.length < max) {
      const doc = await this.#col.findOneAndUpdate(
        { status: 'pending', dueAt: { $lte: now }, leaseUntil: { $lte: now } },
        { $set: { leaseUntil: now + leaseMs } },
        { sort: { dueAt: 1, createdAt: 1 }, returnDocument: 'after' },
      );
      if (!doc) break;
      taken.push(toRow(doc));
    }
    return taken;
  }

  async settle(settlements: DeliverySettlement[]): Promise<void> {
    if (settlements.length === 0) return;
    const updatedAt = new Date().toISOString();
    await this.#col.bulkWrite(
      settlements.map((s) =>
        s.outcome === 'completed'
          ? { deleteOne: { filter: { _id: s.id } } }
          : {
              updateOne: {
                filter: { _id: s.id },
                update: {
                  $set:
                    s.outcome === 'rescheduled'
                      ? { dueAt: s.dueAt, leaseUntil: 0, attempts: s.attempts, lastError: s.lastError, updatedAt }
                      : { status: 'dead', leaseUntil: 0, attempts: s.attempts, lastError: s.lastError, updatedAt },
                },
              },
            },
      ),
      { ordered: false },
    );
  }

  async listDead(instanceId: string): Promise<DeliveryRow[]> {
    return (await this.#col.find({ instanceId, status: 'dead' }).sort({ createdAt: 1 }).toArray()).map(toRow);
  }

  async revive(instanceId: string, ids: string[] | undefined, now: number): Promise<number> {
    if (ids?.length === 0) return 0;
    const res = await this.#col.updateMany(
      { instanceId, status: 'dead', ...(ids ? { _id: { $in: ids } } : {}) },
      { $set: { status: 'pending', dueAt: now, leaseUntil: 0, attempts: 0, updatedAt: new Date(now).toISOString() } },
    );
    return res.modifiedCount;
  }

  async countPending(): Promise<number> {
    return this.#col.countDocuments({ status: 'pending' });
  }

  /** Dead letters die with their instance; pending deliveries still go out. */
  async forgetDead(instanceId: string, session?: ClientSession): Promise<void> {
    await this.#col.deleteMany({ instanceId, status: 'dead' }, { session });
  }
}
