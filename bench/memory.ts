/**
 * Memory of idle instances: the V8 heap one linked, idle sandbox instance keeps on its owner node, measured
 * after a full garbage collection.
 *
 *   npx tsx bench/memory.ts [instances=1000] [mode=both|cluster|embedded]
 *
 * One node process per mode (cluster: on a redis-server of its own; embedded: in-process leases), both on
 * SQLite. `instances` sandbox instances are created in the store, then connected and linked through the
 * node (a real sandbox link, as a phone would), half first, then the rest. At each step the test-only
 * `POST /api/cluster/probe-heap` runs full collections in the node and reads its memory. Printed per mode:
 * heap, external memory and RSS at each step; heap per instance from none to all (the goal, ≤ 50 KB) and
 * from half to all (the cost of one more instance, without what the first link loads once). In cluster
 * mode, also what the idle node asks of Redis once all are linked (lease renewals, heartbeats): commands,
 * script calls, Redis CPU and bytes per second over a quiet window, from Redis's own INFO counters. See
 * bench/README.md.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AccountService } from '../src/accounts/account-service.js';
import { InstanceService } from '../src/instances/instance-service.js';
import { SecretBox } from '../src/security/secret-box.js';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN, CLUSTER_ENCRYPTION_KEY, NodeProcess } from '../test/cluster/node-process.js';
import { startRedisServer } from '../test/helpers/redis-server.js';
import type { RedisServer } from '../test/helpers/redis-server.js';
import { apiCall } from './http-client.js';
import { idleTraffic } from './redis-traffic.js';
import type { Traffic } from './redis-traffic.js';
import { fmt, printTable } from './stats.js';

const INSTANCES = Number(process.argv[2] ?? 1000);
const MODES = process.argv[3] && process.argv[3] !== 'both' ? [process.argv[3]] : ['cluster', 'embedded'];
const GOAL_KB = 50;
/** Redis commands per second an idle node may cost, whatever it owns (issue "Redis at scale"). */
const IDLE_COMMANDS_GOAL = 50;
const LINK_CONCURRENCY = 32;
/** Time for the link's after-effects (events, webhook queue, timers) to settle before a measurement. */
const SETTLE_MS = 2000;
/** The quiet window over which the idle cluster node's Redis traffic is read. */
const TRAFFIC_WINDOW_MS = 10_000;
/** The lease TTL the node runs with (the default), and the renewal period that follows from it. */
const LEASE_TTL_MS = 2500;
const RENEW_PERIOD_MS = LEASE_TTL_MS / 3;

const agent = new Agent({ keepAlive: true, maxSockets: LINK_CONCURRENCY });
const call = (base: string, method: string, path: string, token: string, body?: unknown) =>
  apiCall(agent, new URL(path, base), method, token, body === undefined ? undefined : JSON.stringify(body));

interface Heap {
  heapUsed: number;
  external: number;
  rss: number;
  actors: number;
}

/** The node's memory after full collections (the smaller of two reads: a stray request may be in flight). */
async function heap(node: NodeProcess): Promise<Heap> {
  const read = async () => {
    const res = await call(node.url, 'POST', '/api/cluster/probe-heap', CLUSTER_ADMIN_TOKEN);
    if (res.status !== 200) throw new Error(`probe-heap on ${node.nodeId}: ${res.status} ${res.text}`);
    return JSON.parse(res.text) as Heap;
  };
  const [a, b] = [await read(), await read()];
  return a.heapUsed <= b.heapUsed ? a : b;
}

async function link(node: NodeProcess, names: string[], token: string, offset: number): Promise<void> {
  let next = 0;
  const linker = async () => {
    for (let i = next++; i < names.length; i = next++) {
      // A node that just started may still be activating the instance (503, "moving"): ask again.
      for (let attempt = 1; ; attempt++) {
        const connect = await call(node.url, 'GET', `/api/instance/connect/${names[i]}`, token);
        const linked =
          connect.status === 200
            ? await call(node.url, 'POST', `/api/sandbox/link/${names[i]}`, token, {
                number: `5511${String(70_000_000 + offset + i)}`,
              })
            : connect;
        if (connect.status === 200 && linked.status === 200) break;
        if ((linked.status !== 503 && linked.status !== 409) || attempt === 20) {
          throw new Error(`linking ${names[i]}: ${connect.status} ${linked.status} ${linked.text}`);
        }
        await new Promise((r) => setTimeout(r, 250 * attempt));
      }
    }
  };
  await Promise.all(Array.from({ length: LINK_CONCURRENCY }, linker));
}

interface Result {
  mode: string;
  steps: { label: string; heap: Heap }[];
  traffic?: Traffic;
}

async function measure(mode: string): Promise<Result> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-memory-'));
  let redis: RedisServer | undefined;
  let node: NodeProcess | undefined;
  const store = new SqliteStore(join(dataDir, 'switchboard.db'));
  try {
    if (mode === 'cluster') redis = await startRedisServer();
    const { account, token } = await new AccountService(store, INSTANCES + 10).create({ name: `memory-${mode}` });
    const instances = new InstanceService({
      store,
      secrets: new SecretBox(Buffer.from(CLUSTER_ENCRYPTION_KEY, 'hex')),
      allowPrivateUrls: true,
      logger: pino({ level: 'silent' }),
    });
    const names = Array.from({ length: INSTANCES }, (_, i) => `mem-${i}`);
    for (const name of names) await instances.create(account, { name });
    // Started once the instances exist: a node waiting on this process's write lock (SQLite) stalls.
    node = await NodeProcess.start({
      nodeId: mode,
      ...(redis ? { redisUrl: redis.url } : {}),
      dataDir,
      probeFile: join(dataDir, 'probe.jsonl'),
      env: { TEST_PROBE_WRITE_MS: '0', RATE_LIMIT_PER_MINUTE: '1000000' },
    });
    await sleep(SETTLE_MS);
    const steps = [{ label: 'no instance linked', heap: await heap(node) }];
    const half = Math.floor(INSTANCES / 2);
    for (const [from, to] of [
      [0, half],
      [half, INSTANCES],
    ] as const) {
      await link(node, names.slice(from, to), token, from);
      await sleep(SETTLE_MS);
      const h = await heap(node);
      if (h.actors !== to) throw new Error(`${mode}: ${h.actors} actors running, expected ${to}`);
      steps.push({ label: `${to} linked, idle`, heap: h });
      process.stderr.write(`${mode}: ${to} linked\n`);
    }
    const traffic = redis ? await idleTraffic([redis.url], TRAFFIC_WINDOW_MS) : undefined;
    return { mode, steps, ...(traffic ? { traffic } : {}) };
  } finally {
    await node?.terminate().catch(() => undefined);
    await redis?.stop();
    await store.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);
const kb = (bytes: number) => fmt(bytes / 1024, 1);

async function main(): Promise<void> {
  try {
    const results: Result[] = [];
    for (const mode of MODES) results.push(await measure(mode));
    printTable(
      ['mode', 'step', 'actors', 'heap MB', 'external MB', 'RSS MB'],
      results.flatMap((r) =>
        r.steps.map(({ label, heap: h }) => [
          r.mode,
          label,
          String(h.actors),
          mb(h.heapUsed),
          mb(h.external),
          mb(h.rss),
        ]),
      ),
      'One node, after full garbage collections',
    );
    console.log('');
    for (const { mode, steps } of results) {
      const [none, half, all] = steps.map((s) => s.heap) as [Heap, Heap, Heap];
      const perInstance = (all.heapUsed - none.heapUsed) / all.actors;
      const marginal = (all.heapUsed - half.heapUsed) / (all.actors - half.actors);
      console.log(
        `${mode}: heap per idle instance ${kb(perInstance)} KB (goal ≤ ${GOAL_KB} KB: ${perInstance <= GOAL_KB * 1024 ? 'met' : 'MISSED'}); ` +
          `from ${half.actors} to ${all.actors}: ${kb(marginal)} KB; ` +
          `external ${kb((all.external - none.external) / all.actors)} KB, RSS ${kb((all.rss - none.rss) / all.actors)} KB`,
      );
    }
    for (const { mode, steps, traffic } of results) {
      if (!traffic) continue;
      const actors = steps.at(-1)!.heap.actors;
      console.log(
        `${mode}: Redis while ${actors} instances idle (${TRAFFIC_WINDOW_MS / 1000} s): ${fmt(traffic.commands, 1)} commands/s, ` +
          `${fmt(traffic.scripts, 1)} script calls/s (${fmt((traffic.scripts * RENEW_PERIOD_MS) / 1000, 1)} per ${fmt(RENEW_PERIOD_MS, 0)} ms renewal period, ${fmt(traffic.scriptMs, 3)} ms each), ` +
          `Redis CPU ${fmt(traffic.redisCpuPct, 2)} %, in ${kb(traffic.bytesIn)} KB/s, out ${kb(traffic.bytesOut)} KB/s; ` +
          `goal ≤ ${IDLE_COMMANDS_GOAL} commands/s per node: ${traffic.commands <= IDLE_COMMANDS_GOAL ? 'met' : 'MISSED'}`,
      );
      console.log(`${mode}: busiest commands/s: ${traffic.top.map(([n, r]) => `${n} ${fmt(r, 1)}`).join(', ')}`);
    }
  } finally {
    agent.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
