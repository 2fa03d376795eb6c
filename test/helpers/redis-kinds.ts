import { Cluster, Redis } from 'ioredis';
import { createRedisClients } from '../../src/redis/redis-client.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { connectCluster, startRedisCluster } from './redis-cluster.js';
import type { RedisClusterServer } from './redis-cluster.js';
import { SENTINEL_MASTER, startRedisSentinels } from './redis-sentinel.js';
import type { RedisSentinelServers } from './redis-sentinel.js';
import { connectRedis, startRedisServer } from './redis-server.js';
import type { RedisServer } from './redis-server.js';

/** A Redis deployment a test runs against, started and stopped by the test. */
export interface RedisUnderTest {
  /** REDIS_MODE */
  readonly mode: 'single' | 'cluster' | 'sentinel';
  /** REDIS_URL */
  readonly url: string;
  /** The node options that point at it (REDIS_URL, REDIS_MODE). */
  readonly env: Record<string, string>;
  /** A client made as the service makes it, connected (errors swallowed: servers are killed on purpose). */
  connect(): Promise<RedisClient>;
  /** A client for a test's own looks, which queues its commands while Redis is away (errors swallowed). */
  watcher(): RedisClient;
  /** The one redis-server (single mode), for tests that restart or pause it. */
  readonly server?: RedisServer;
  /** The cluster's servers (cluster mode), for tests that fail a master over. */
  readonly cluster?: RedisClusterServer;
  /** The master, replica and sentinels (sentinel mode), for tests that fail the master over. */
  readonly sentinel?: RedisSentinelServers;
  stop(): Promise<void>;
}

export interface RedisKind {
  /** For test titles. */
  readonly name: string;
  start(): Promise<RedisUnderTest>;
}

/** Deletes every key: on a cluster, on each master (FLUSHALL is not routed). */
export async function flushAll(client: RedisClient): Promise<void> {
  if (client instanceof Cluster) await Promise.all(client.nodes('master').map((n) => n.flushall()));
  else await client.flushall();
}

export const SINGLE_REDIS: RedisKind = {
  name: 'one redis-server',
  async start() {
    const server = await startRedisServer();
    return {
      mode: 'single',
      url: server.url,
      env: { REDIS_URL: server.url, REDIS_MODE: 'single' },
      connect: () => connectRedis(server.url),
      watcher: () => new Redis(server.url, { maxRetriesPerRequest: 1 }).on('error', () => undefined),
      server,
      stop: () => server.stop(),
    };
  },
};

export const REDIS_CLUSTER: RedisKind = {
  name: 'a Redis Cluster (3 masters, 3 replicas)',
  async start() {
    const cluster = await startRedisCluster();
    return {
      mode: 'cluster',
      url: cluster.url,
      env: { REDIS_URL: cluster.url, REDIS_MODE: 'cluster' },
      connect: () => connectCluster(cluster),
      cluster,
      watcher: () =>
        new Cluster(
          cluster.servers.map((s) => ({ host: '127.0.0.1', port: s.port })),
          { redisOptions: { maxRetriesPerRequest: 1 } },
        ).on('error', () => undefined),
      stop: () => cluster.stop(),
    };
  },
};

export const REDIS_SENTINEL: RedisKind = {
  name: 'a master, a replica and three sentinels',
  async start() {
    const sentinel = await startRedisSentinels();
    const sentinels = sentinel.sentinels.map((s) => ({ host: '127.0.0.1', port: s.port }));
    return {
      mode: 'sentinel',
      url: sentinel.url,
      env: { REDIS_URL: sentinel.url, REDIS_MODE: 'sentinel', REDIS_SENTINEL_MASTER: SENTINEL_MASTER },
      async connect() {
        const [client] = createRedisClients({
          mode: 'sentinel',
          urls: sentinel.url.split(','),
          sentinelMaster: SENTINEL_MASTER,
        });
        client!.on('error', () => undefined);
        await client!.connect();
        return client!;
      },
      watcher: () =>
        // Told of a failover by the sentinels: the old master may stay a master, unreplicated, for a while.
        new Redis({ sentinels, name: SENTINEL_MASTER, maxRetriesPerRequest: 1, failoverDetector: true }).on(
          'error',
          () => undefined,
        ),
      sentinel,
      stop: () => sentinel.stop(),
    };
  },
};

/** Every kind the coordination tests run on. */
export const REDIS_KINDS: readonly RedisKind[] = [SINGLE_REDIS, REDIS_CLUSTER];
