import { isCluster } from './redis-client.js';
import type { RedisClient } from './redis-client.js';

/**
 * Commands over keys of many slots (one owner hint per instance). A Redis Cluster refuses MGET and
 * pipelines across slots: there each key is its own command, all sent at once (one round trip in all).
 */

export async function getMany(client: RedisClient, keys: string[]): Promise<(string | null)[]> {
  if (keys.length === 0) return [];
  if (isCluster(client)) return Promise.all(keys.map((k) => client.get(k)));
  return client.mget(...keys);
}

/** Sets every key to its value (no expiry); rejects if any write failed. */
export async function setMany(client: RedisClient, entries: [key: string, value: string][]): Promise<void> {
  if (entries.length === 0) return;
  if (isCluster(client)) {
    await Promise.all(entries.map(([k, v]) => client.set(k, v)));
    return;
  }
  const pipeline = client.pipeline();
  for (const [k, v] of entries) pipeline.set(k, v);
  const failed = ((await pipeline.exec()) ?? []).find(([err]) => err)?.[0];
  if (failed) throw failed;
}
