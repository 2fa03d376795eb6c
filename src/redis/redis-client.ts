import { Cluster, Redis } from 'ioredis';
import type { ClusterOptions, RedisOptions } from 'ioredis';
import type { RedisMode } from '../config/config.js';

/**
 * The connections of a node to Redis, by `REDIS_MODE`: one server (or several independent masters), one
 * Redis Cluster, or a master followed through its sentinels. Everything above takes a `RedisClient` and
 * asks `isCluster` only where the two differ (sharded pub/sub, commands over keys of several slots).
 */

/** One Redis server (directly or through sentinels), or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export interface RedisTarget {
  mode: RedisMode;
  /** Independent masters (single), seed nodes (cluster) or sentinels (sentinel). */
  urls: string[];
  /** The master's name at the sentinels (sentinel mode). */
  sentinelMaster?: string | undefined;
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

// No offline queue, one retry: a lease command must fail fast while Redis is away, never run late.
const COMMAND_OPTIONS = { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true } as const;

/** A node of `redis://[user:password@]host:port`, with the credentials and TLS the URL asks for. */
function parseUrl(url: string): { host: string; port: number; options: RedisOptions } {
  const u = new URL(url);
  const options: RedisOptions = {};
  if (u.username) options.username = decodeURIComponent(u.username);
  if (u.password) options.password = decodeURIComponent(u.password);
  if (u.protocol === 'rediss:') options.tls = {};
  return { host: u.hostname, port: Number(u.port || 6379), options };
}

function clusterClient(urls: string[]): Cluster {
  const seeds = urls.map(parseUrl);
  return new Cluster(
    seeds.map(({ host, port }) => ({ host, port })),
    {
      enableOfflineQueue: false,
      lazyConnect: true,
      // No auto-pipelining: it routes a script by its first argument, which is our key count, not a key.
      redisOptions: { ...seeds[0]!.options, maxRetriesPerRequest: 1 },
    },
  );
}

function sentinelClient(urls: string[], master: string): Redis {
  const sentinels = urls.map(parseUrl);
  const credentials = sentinels[0]!.options;
  return new Redis({
    ...COMMAND_OPTIONS,
    sentinels: sentinels.map(({ host, port }) => ({ host, port })),
    name: master,
    ...credentials,
    ...(credentials.password ? { sentinelPassword: credentials.password } : {}),
    ...(credentials.tls ? { enableTLSForSentinelMode: true } : {}),
    // Told of a promotion by the sentinels at once, instead of at the old master's next error.
    failoverDetector: true,
    // A master demoted under us answers READONLY: reconnect, and the sentinels name the new one.
    reconnectOnError: (err) => err.message.startsWith('READONLY'),
  });
}

/**
 * The command connections `target` needs, not yet connected (`connect()` them): one per master in single
 * mode (a majority of them holds the leases), one client otherwise.
 */
export function createRedisClients(target: RedisTarget): RedisClient[] {
  switch (target.mode) {
    case 'single':
      return target.urls.map((url) => new Redis(url, COMMAND_OPTIONS));
    case 'cluster':
      return [clusterClient(target.urls)];
    case 'sentinel':
      if (!target.sentinelMaster) throw new Error('sentinel mode needs the master name');
      return [sentinelClient(target.urls, target.sentinelMaster)];
  }
}

/**
 * A connection for subscriptions beside `client`: unlike commands, a subscription waits for a
 * (re)connection, and ioredis subscribes again after a Redis restart or a failover. On a cluster it
 * subscribes per master (sharded pub/sub): each channel lives on the master of its slot.
 */
export function subscriberFor(client: RedisClient): RedisClient {
  if (isCluster(client)) {
    const overrides: ClusterOptions = {
      enableOfflineQueue: true,
      lazyConnect: false,
      shardedSubscribers: true,
      redisOptions: { ...client.options.redisOptions, maxRetriesPerRequest: null },
    };
    return client.duplicate([], overrides);
  }
  return client.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null });
}
