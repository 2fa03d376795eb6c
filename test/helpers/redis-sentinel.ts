import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { startRedisServer } from './redis-server.js';
import type { RedisServer } from './redis-server.js';

const run = promisify(execFile);

export const SENTINEL_MASTER = 'main';

/** A master, its replica and three sentinels watching them (quorum 2), on free ports. */
export interface RedisSentinelServers {
  /** The two data servers; which one is master changes with a failover. */
  readonly servers: RedisServer[];
  readonly sentinels: RedisServer[];
  /** The sentinels, `redis://127.0.0.1:<port>,…` (REDIS_URL with REDIS_MODE=sentinel). */
  readonly url: string;
  /** The data server the sentinels name as master now. */
  master(): Promise<RedisServer>;
  /** `SENTINEL FAILOVER`: the replica is promoted, the old master follows it; resolves once the sentinels agree. */
  failover(): Promise<RedisServer>;
  stop(): Promise<void>;
}

async function sentinelCli(sentinel: RedisServer, ...args: string[]): Promise<string> {
  return (await run('redis-cli', ['-p', String(sentinel.port), 'sentinel', ...args])).stdout.trim();
}

async function masterPort(sentinel: RedisServer): Promise<number> {
  const [, port] = (await sentinelCli(sentinel, 'get-master-addr-by-name', SENTINEL_MASTER)).split('\n');
  return Number(port);
}

/** `INFO replication` of a data server, as a map. */
async function replication(server: RedisServer): Promise<Map<string, string>> {
  const out = (await run('redis-cli', ['-p', String(server.port), 'info', 'replication'])).stdout;
  return new Map(out.split(/\r?\n/).flatMap((l) => (l.includes(':') ? [l.split(':', 2) as [string, string]] : [])));
}

async function waitFor(what: string, probe: () => Promise<boolean>, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    if (await probe().catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function startRedisSentinels(): Promise<RedisSentinelServers> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-redis-sentinel-'));
  const servers: RedisServer[] = [];
  const sentinels: RedisServer[] = [];
  const stop = async () => {
    await Promise.all([...sentinels, ...servers].map((s) => s.stop()));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    // Each in a directory of its own: a full sync writes an RDB file into the working directory.
    const own = (name: string) => mkdtempSync(join(dir, `${name}-`));
    const master = await startRedisServer({ appendOnlyDir: own('master') });
    servers.push(master, await startRedisServer({ appendOnlyDir: own('replica'), replicaOf: master.port }));
    await waitFor(
      'the replica to sync',
      async () => (await replication(servers[1]!)).get('master_link_status') === 'up',
    );
    for (let i = 0; i < 3; i++) {
      const config = join(dir, `sentinel-${i}.conf`);
      writeFileSync(
        config,
        [
          `sentinel monitor ${SENTINEL_MASTER} 127.0.0.1 ${master.port} 2`,
          `sentinel down-after-milliseconds ${SENTINEL_MASTER} 1000`,
          `sentinel failover-timeout ${SENTINEL_MASTER} 5000`,
          '',
        ].join('\n'),
      );
      sentinels.push(await startRedisServer({ sentinelConfig: config }));
    }
    // Each sentinel knows the replica and the other two before a failover can be agreed.
    await waitFor('the sentinels to know each other', async () => {
      const views = await Promise.all(
        sentinels.map(async (s) => {
          const info = await sentinelCli(s, 'master', SENTINEL_MASTER);
          const lines = info.split('\n');
          const field = (name: string) => lines[lines.indexOf(name) + 1];
          return field('num-other-sentinels') === '2' && field('num-slaves') === '1';
        }),
      );
      return views.every(Boolean);
    });
  } catch (err) {
    await stop();
    throw err;
  }
  const master = async () => {
    const port = await masterPort(sentinels[0]!);
    const server = servers.find((s) => s.port === port);
    if (!server) throw new Error(`the sentinels name an unknown master (port ${port})`);
    return server;
  };
  return {
    servers,
    sentinels,
    url: sentinels.map((s) => s.url).join(','),
    master,
    async failover() {
      const before = await master();
      await sentinelCli(sentinels[0]!, 'failover', SENTINEL_MASTER);
      const after = servers.find((s) => s !== before)!;
      await waitFor('every sentinel to name the promoted replica', async () =>
        (await Promise.all(sentinels.map(masterPort))).every((p) => p === after.port),
      );
      await waitFor(
        'the promoted replica to be master',
        async () => (await replication(after)).get('role') === 'master',
      );
      return after;
    },
    stop,
  };
}
