import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { createRedisClients } from '../../src/redis/redis-client.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { startRedisCluster } from '../helpers/redis-cluster.js';
import type { RedisClusterServer } from '../helpers/redis-cluster.js';
import { startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { SENTINEL_MASTER, startRedisSentinels } from '../helpers/redis-sentinel.js';
import type { RedisSentinelServers } from '../helpers/redis-sentinel.js';
import { until } from '../helpers/until.js';

const run = promisify(execFile);

/** Which Redis the chaos nodes share (REDIS_MODE). */
export type ChaosRedisMode = 'single' | 'cluster' | 'sentinel';

/**
 * The Redis of a chaos run. `single`: one server with an append-only file synced every second, which each
 * node reaches through its own TCP proxy (so that one node can be cut from it). `cluster`: three masters
 * with a replica each; `sentinel`: a master, its replica and three sentinels. In those two, the nodes
 * reach Redis directly and the Redis fault is a failover: the primary killed, a replica promoted (it may
 * lack the primary's last writes).
 */
export interface ChaosRedis {
  readonly mode: ChaosRedisMode;
  /** The single server (its faults: restart, kill, empty, pause); undefined in the other modes. */
  readonly server: RedisServer | undefined;
  /** REDIS_* of a node; `proxyUrl` is the node's own path to the single server. */
  env(proxyUrl?: string): Record<string, string>;
  /** A client of the run's own (leases read by the checkers), made as the service makes it. */
  admin(): RedisClient;
  /** Kills the primary (of one random shard) with SIGKILL, waits for a replica to take over, restarts it. */
  failover(pick: <T>(items: T[]) => T): Promise<void>;
  stop(): Promise<void>;
}

export async function startChaosRedis(mode: ChaosRedisMode, dir: string): Promise<ChaosRedis> {
  switch (mode) {
    case 'single':
      return single(await startRedisServer({ appendOnlyDir: dir, appendFsync: 'everysec' }));
    case 'cluster':
      return cluster(await startRedisCluster());
    case 'sentinel':
      return sentinel(await startRedisSentinels());
  }
}

function quietClient(client: RedisClient): RedisClient {
  client.on('error', () => undefined);
  return client;
}

function single(server: RedisServer): ChaosRedis {
  let admin: RedisClient | undefined;
  return {
    mode: 'single',
    server,
    env: (proxyUrl) => ({ REDIS_URL: proxyUrl ?? server.url }),
    admin: () => (admin ??= quietClient(createRedisClients({ mode: 'single', urls: [server.url] })[0]!)),
    failover: () => Promise.reject(new Error('a single Redis has no replica to fail over to')),
    async stop() {
      admin?.disconnect();
      await server.stop();
    },
  };
}

/** `ROLE` of a server: master or replica (slave). */
async function role(server: RedisServer): Promise<string> {
  return (await run('redis-cli', ['-p', String(server.port), 'role'])).stdout.split('\n')[0]!.trim();
}

function cluster(redis: RedisClusterServer): ChaosRedis {
  let admin: RedisClient | undefined;
  return {
    mode: 'cluster',
    server: undefined,
    env: () => ({ REDIS_MODE: 'cluster', REDIS_URL: redis.url }),
    admin: () => (admin ??= quietClient(createRedisClients({ mode: 'cluster', urls: redis.url.split(',') })[0]!)),
    async failover(pick) {
      // A random shard: the master of a random key's slot.
      const master = await redis.masterOf(`chaos-${pick([...Array(1000).keys()])}`);
      const replica = await redis.replicaOf(master);
      await master.kill9();
      // The cluster promotes the replica once it holds the master failed (cluster-node-timeout 2 s).
      await until(async () => (await role(replica).catch(() => '')) === 'master', 'the promotion', 15_000).catch(() =>
        redis.takeover(replica),
      );
      await master.restart();
    },
    async stop() {
      admin?.disconnect();
      await redis.stop();
    },
  };
}

function sentinel(redis: RedisSentinelServers): ChaosRedis {
  let admin: RedisClient | undefined;
  const urls = redis.url.split(',');
  return {
    mode: 'sentinel',
    server: undefined,
    env: () => ({ REDIS_MODE: 'sentinel', REDIS_URL: redis.url, REDIS_SENTINEL_MASTER: SENTINEL_MASTER }),
    admin: () =>
      (admin ??= quietClient(createRedisClients({ mode: 'sentinel', urls, sentinelMaster: SENTINEL_MASTER })[0]!)),
    async failover() {
      const master = await redis.master();
      await master.kill9();
      // The sentinels hold it down after 1 s and promote the replica.
      await until(async () => (await redis.master().catch(() => master)) !== master, 'the promotion', 20_000);
      // Back with what it had synced to disk: the sentinels make it the new master's replica.
      await master.restart();
    },
    async stop() {
      admin?.disconnect();
      await redis.stop();
    },
  };
}
