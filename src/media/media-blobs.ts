import type { RedisClient } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import type { MediaBlobRepository } from '../store/store.js';

/**
 * The one copy of a received file that base64 deliveries and GET /api/chat/media read, whichever node
 * they run on: in Redis in cluster mode, in the store (SQLite or MongoDB) without Redis. Each copy
 * expires after its TTL; deliveries reference it by (instance, message) instead of carrying the bytes.
 */
export interface MediaBlobStore {
  put(instanceId: string, messageId: string, data: Buffer, ttlMs: number): Promise<void>;
  /** Undefined once it expired (or was never kept). */
  get(instanceId: string, messageId: string): Promise<Buffer | undefined>;
}

export class RedisMediaBlobs implements MediaBlobStore {
  constructor(private readonly redis: RedisClient) {}

  async put(instanceId: string, messageId: string, data: Buffer, ttlMs: number): Promise<void> {
    await this.redis.set(keys.mediaBlob(instanceId, messageId), data, 'PX', Math.max(1, Math.round(ttlMs)));
  }

  async get(instanceId: string, messageId: string): Promise<Buffer | undefined> {
    return (await this.redis.getBuffer(keys.mediaBlob(instanceId, messageId))) ?? undefined;
  }
}

/** Expired rows are never read; they are deleted at most this often, by the node that writes a new one. */
const PRUNE_EVERY_MS = 5 * 60_000;

export class StoreMediaBlobs implements MediaBlobStore {
  #prunedAt = 0;

  constructor(private readonly repo: MediaBlobRepository) {}

  async put(instanceId: string, messageId: string, data: Buffer, ttlMs: number): Promise<void> {
    const now = Date.now();
    await this.repo.put({ instanceId, messageId, data, expiresAt: now + ttlMs });
    if (now - this.#prunedAt >= PRUNE_EVERY_MS) {
      this.#prunedAt = now;
      // Deletes are idempotent; a failed prune is simply repeated later.
      this.repo.prune(now).catch(() => undefined);
    }
  }

  get(instanceId: string, messageId: string): Promise<Buffer | undefined> {
    return this.repo.get(instanceId, messageId, Date.now());
  }
}
