import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import type { Cluster } from 'ioredis';
import { createRedisClients } from '../../src/redis/redis-client.js';
import { startRedisServer } from './redis-server.js';
import type { RedisServer } from './redis-server.js';

const run = promisify(execFile);

/** A throwaway Redis Cluster of `redis-server` processes: three masters, each with one replica. */
export interface RedisClusterServer {
  readonly servers: RedisServer[];
  /** The seed list, `redis://127.0.0.1:<port>,…` (REDIS_URL with REDIS_MODE=cluster). */
  readonly url: string;
  /** The server serving `key`'s slot as master now. */
  masterOf(key: string): Promise<RedisServer>;
  /** A replica of `master`. */
  replicaOf(master: RedisServer): Promise<RedisServer>;
  /** Promotes `replica` without its master's consent (`CLUSTER FAILOVER TAKEOVER`), as after a crash. */
  takeover(replica: RedisServer): Promise<void>;
  stop(): Promise<void>;
}

const READY_TIMEOUT_MS = 20_000;

/** CLUSTER INFO of every server says `cluster_state:ok` and every slot is served. */
async function allAgree(servers: RedisServer[]): Promise<boolean> {
  const infos = await Promise.all(
    servers.map((s) =>
      run('redis-cli', ['-p', String(s.port), 'cluster', 'info']).then(
        (r) => r.stdout,
        () => '',
      ),
    ),
  );
  if (!infos.every((i) => i.includes('cluster_state:ok') && i.includes('cluster_slots_ok:16384'))) return false;
  // Each master known with its replica (gossip spreads the roles after the slots).
  const views = await Promise.all(servers.map((s) => clusterNodes([s]).catch(() => [])));
  return views.every((nodes) => {
    const masters = new Set(nodes.filter((n) => n.role === 'master').map((n) => n.id));
    return masters.size === 3 && nodes.filter((n) => n.role === 'replica' && masters.has(n.masterId)).length === 3;
  });
}

/** Runs `redis-cli <args>` against the first server that answers. */
async function cli(servers: RedisServer[], args: string[]): Promise<string> {
  let last: unknown;
  for (const s of servers) {
    try {
      return (await run('redis-cli', ['-p', String(s.port), ...args])).stdout;
    } catch (err) {
      last = err;
    }
  }
  throw last;
}

interface ClusterNodeLine {
  id: string;
  port: number;
  role: 'master' | 'replica';
  masterId: string;
  slots: [number, number][];
}

/** CLUSTER NODES as one server sees it; nodes it holds failed are left out. */
async function clusterNodes(servers: RedisServer[]): Promise<ClusterNodeLine[]> {
  const out = await cli(servers, ['cluster', 'nodes']);
  return out
    .trim()
    .split('\n')
    .flatMap((line) => {
      const [id, address, flags, masterId, , , , , ...ranges] = line.split(' ');
      if (!id || !address || !flags || flags.includes('fail')) return [];
      const slots = ranges
        .filter((r) => !r.startsWith('['))
        .map((r) => {
          const [from, to = from] = r.split('-').map(Number);
          return [from!, to!] as [number, number];
        });
      const role = flags.includes('master') ? ('master' as const) : ('replica' as const);
      return [{ id, port: Number(address.split('@')[0]!.split(':')[1]), role, masterId: masterId ?? '-', slots }];
    });
}

/**
 * Starts six cluster-enabled servers on free ports, each in its own temporary directory, joins them with
 * `redis-cli --cluster create … --cluster-replicas 1` and waits until every server sees the cluster whole.
 */
export async function startRedisCluster(): Promise<RedisClusterServer> {
  const dirs: string[] = [];
  const servers: RedisServer[] = [];
  const stop = async () => {
    await Promise.all(servers.map((s) => s.stop()));
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < 6; i++) {
      const dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-cluster-'));
      dirs.push(dir);
      servers.push(await startRedisServer({ clusterDir: dir }));
    }
    const addresses = servers.map((s) => `127.0.0.1:${s.port}`);
    await run('redis-cli', ['--cluster', 'create', ...addresses, '--cluster-replicas', '1', '--cluster-yes']);
    const deadline = performance.now() + READY_TIMEOUT_MS;
    while (!(await allAgree(servers))) {
      if (performance.now() > deadline) throw new Error('the Redis Cluster did not agree on its slots in time');
      await new Promise((r) => setTimeout(r, 100));
    }
  } catch (err) {
    await stop();
    throw err;
  }
  return {
    servers,
    url: servers.map((s) => s.url).join(','),
    async masterOf(key) {
      const slot = Number((await cli(servers, ['cluster', 'keyslot', key])).trim());
      for (const node of await clusterNodes(servers)) {
        if (node.role !== 'master') continue;
        if (!node.slots.some(([from, to]) => slot >= from && slot <= to)) continue;
        const server = servers.find((s) => s.port === node.port);
        if (server) return server;
      }
      throw new Error(`no master serves the slot of ${key}`);
    },
    async replicaOf(master) {
      const nodes = await clusterNodes(servers);
      const id = nodes.find((n) => n.port === master.port)?.id;
      const replica = nodes.find((n) => n.role === 'replica' && n.masterId === id);
      const server = servers.find((s) => s.port === replica?.port);
      if (!server) throw new Error(`no replica of 127.0.0.1:${master.port}`);
      return server;
    },
    async takeover(replica) {
      await run('redis-cli', ['-p', String(replica.port), 'cluster', 'failover', 'takeover']);
    },
    stop,
  };
}

/** A cluster client made as the service makes it (src/redis/redis-client.ts), connected. */
export async function connectCluster(cluster: RedisClusterServer): Promise<Cluster> {
  const client = createRedisClients({ mode: 'cluster', urls: cluster.url.split(',') })[0] as Cluster;
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
