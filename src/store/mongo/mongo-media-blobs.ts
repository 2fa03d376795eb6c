import { randomUUID } from 'node:crypto';
import { Binary } from 'mongodb';
import type { Collection, Db } from 'mongodb';
import type { MediaBlob } from '../records.js';
import type { MediaBlobRepository } from '../store.js';
import type { ClientSession } from 'mongodb';

/** Documents stay well below MongoDB's 16 MB limit; a larger file spans several. */
const CHUNK_BYTES = 8 * 1024 * 1024;

interface ChunkDoc {
  _id: string;
  instanceId: string;
  messageId: string;
  /** One per `put`: a reader takes only a complete set of chunks of one write. */
  version: string;
  n: number;
  count: number;
  data: Binary;
  /** A TTL index removes expired chunks (MongoDB's monitor runs about every minute). */
  expiresAt: Date;
}

/** Received media in MongoDB (collection `media_blobs`), in chunks of at most 8 MB. */
export class MongoMediaBlobs implements MediaBlobRepository {
  readonly #col: Collection<ChunkDoc>;

  constructor(db: Db) {
    this.#col = db.collection<ChunkDoc>('media_blobs');
  }

  static async createIndexes(db: Db): Promise<void> {
    await db.collection('media_blobs').createIndexes([
      { key: { instanceId: 1, messageId: 1, n: 1 }, name: 'instance_message' },
      { key: { expiresAt: 1 }, name: 'expiry', expireAfterSeconds: 0 },
    ]);
  }

  async put(b: MediaBlob): Promise<void> {
    const version = randomUUID();
    const count = Math.max(1, Math.ceil(b.data.length / CHUNK_BYTES));
    const expiresAt = new Date(b.expiresAt);
    for (let n = 0; n < count; n++) {
      const data = new Binary(b.data.subarray(n * CHUNK_BYTES, (n + 1) * CHUNK_BYTES));
      const _id = `${b.instanceId}\u0000${b.messageId}\u0000${n}`;
      await this.#col.replaceOne(
        { _id },
        { instanceId: b.instanceId, messageId: b.messageId, version, n, count, data, expiresAt },
        { upsert: true },
      );
    }
    await this.#col.deleteMany({ instanceId: b.instanceId, messageId: b.messageId, version: { $ne: version } });
  }

  async get(instanceId: string, messageId: string, now: number): Promise<Buffer | undefined> {
    const chunks = await this.#col.find({ instanceId, messageId }).sort({ n: 1 }).toArray();
    const first = chunks[0];
    if (!first || first.expiresAt.getTime() <= now) return undefined;
    const complete = chunks.length === first.count && chunks.every((c, i) => c.n === i && c.version === first.version);
    if (!complete) return undefined;
    return Buffer.concat(chunks.map((c) => Buffer.from(c.data.buffer)));
  }

  async prune(now: number): Promise<number> {
    const res = await this.#col.deleteMany({ expiresAt: { $lte: new Date(now) } });
    return res.deletedCount;
  }

  async forgetInstance(instanceId: string, session?: ClientSession): Promise<void> {
    await this.#col.deleteMany({ instanceId }, { session });
  }
}
