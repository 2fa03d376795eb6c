/**
 * A fleet of real sessions on one node: memory per connected number, and what an idle fleet costs.
 *
 *   npx tsx bench/fleet.ts [--instances 1000] [--idle-seconds 60] [--soak-minutes 0]
 *                          [--contacts 100] [--groups 5] [--history 5] [--connect-rate 5]
 *
 * One node process (the Baileys driver, cluster mode on a redis-server of its own, SQLite), the WhatsApp
 * simulator in this process. `instances` instances are linked by QR, each to a phone of its own whose
 * first sync brings `contacts` contacts, `groups` groups and `history` messages per chat; half first, then
 * the rest, with the node's memory read after full collections (the test-only probe) at none, half and
 * all. Then the fleet idles with light traffic (a message to each instance per minute, from another
 * phone) for `idle-seconds`: Redis commands and store calls per second, event-loop delay p99, CPU per
 * idle instance. `--soak-minutes` goes on with that traffic, reading memory after GC every minute, and
 * prints its slope. Last, the node restarts with the simulator's login limit at `connect-rate` per second
 * (and CONNECT_RATE_PER_SECOND the same): the time until every instance is connected again against
 * (N / rate) + 10 s, and the logins refused. See bench/README.md.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN, NodeProcess } from '../test/cluster/node-process.js';
import { parseSamples, sampleSum } from '../test/helpers/prometheus-text.js';
import { connectRedis, startRedisServer } from '../test/helpers/redis-server.js';
import type { RedisServer } from '../test/helpers/redis-server.js';
import { startTestSimulator } from '../test/helpers/simulator.js';
import type { TestSimulator } from '../test/helpers/simulator.js';
import { linkFleet } from '../test/helpers/simulator-fleet.js';
import type { LinkedInstance } from '../test/helpers/simulator-fleet.js';
import { until } from '../test/helpers/until.js';
import { nodeMemory } from './node-memory.js';
import type { NodeMemory } from './node-memory.js';
import { cpuSeconds } from './process-cpu.js';
import { fmt, printTable } from './stats.js';

const { values: args } = parseArgs({
  options: {
    instances: { type: 'string', default: '1000' },
    'idle-seconds': { type: 'string', default: '60' },
    'soak-minutes': { type: 'string', default: '0' },
    contacts: { type: 'string', default: '100' },
    groups: { type: 'string', default: '5' },
    history: { type: 'string', default: '5' },
    'connect-rate': { type: 'string', default: '5' },
    /** Writes the node's CPU profile (--cpu-prof) into this directory when it stops. */
    'profile-dir': { type: 'string' },
    /** Writes a heap snapshot of the node into this directory after the first and the last soak minute. */
    'heap-snapshot-dir': { type: 'string' },
  },
});
const N = Number(args.instances);
const IDLE_S = Number(args['idle-seconds']);
const SOAK_MIN = Number(args['soak-minutes']);
const BOOK = { contacts: Number(args.contacts), groups: Number(args.groups), messagesPerChat: Number(args.history) };
const CONNECT_RATE = Number(args['connect-rate']);
const GOAL_RSS_MB = 5;
const LINK_CONCURRENCY = 4;
/** Time for a first sync's after-effects (history, app state, key uploads) to settle before a measurement. */
const SETTLE_MS = 8000;

const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 2);

/** Actors the node stopped because it lost its lease, so far: a reading taken after one is of a node that lost its fleet. */
async function leaseLostStops(node: NodeProcess): Promise<number> {
  return sampleSum(await scrape(node), 'switchboard_actor_stops_total', { reason: 'lease-lost' });
}

async function scrape(node: NodeProcess) {
  const res = await node.api.get('/metrics', { token: CLUSTER_ADMIN_TOKEN });
  return parseSamples(res.text);
}

async function redisCommands(url: string): Promise<number> {
  const redis = await connectRedis(url);
  try {
    return Number(/^total_commands_processed:(\d+)/m.exec(await redis.info('stats'))?.[1] ?? 0);
  } finally {
    redis.disconnect();
  }
}

/** A message to each instance per minute, from the next phone of the fleet, spread evenly; stops with the returned function. */
function lightTraffic(sim: TestSimulator, fleet: LinkedInstance[]): { stop: () => Promise<void>; sent: () => number } {
  let i = 0;
  let sent = 0;
  let failed = 0;
  const inFlight = new Set<Promise<void>>();
  const timer = setInterval(() => {
    const to = fleet[i % fleet.length]!;
    const from = fleet[(i + 1) % fleet.length]!;
    i++;
    const p = sim.control
      .send(from.number, { to: to.number, text: `ping ${i}` })
      .then(() => void sent++)
      .catch(() => void failed++)
      .finally(() => inFlight.delete(p));
    inFlight.add(p);
  }, 60_000 / fleet.length);
  return {
    stop: async () => {
      clearInterval(timer);
      await Promise.all(inFlight);
      if (failed) process.stderr.write(`${failed} traffic sends failed\n`);
    },
    sent: () => sent,
  };
}

/** Least-squares slope of y over x. */
function slope(points: [number, number][]): number {
  const n = points.length;
  const mx = points.reduce((s, [x]) => s + x, 0) / n;
  const my = points.reduce((s, [, y]) => s + y, 0) / n;
  const num = points.reduce((s, [x, y]) => s + (x - mx) * (y - my), 0);
  const den = points.reduce((s, [x]) => s + (x - mx) ** 2, 0);
  return den === 0 ? 0 : num / den;
}

async function main(): Promise<void> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-fleet-'));
  let sim: TestSimulator | undefined;
  let redis: RedisServer | undefined;
  let node: NodeProcess | undefined;
  const start = (extra: Record<string, string> = {}) =>
    NodeProcess.start({
      nodeId: 'fleet',
      redisUrl: redis!.url,
      dataDir,
      probeFile: join(dataDir, 'probe.jsonl'),
      nodeFlags: [
        ...(args['profile-dir'] ? ['--cpu-prof', `--cpu-prof-dir=${args['profile-dir']}`] : []),
        ...(args['heap-snapshot-dir']
          ? ['--heapsnapshot-signal=SIGUSR2', `--diagnostic-dir=${args['heap-snapshot-dir']}`]
          : []),
      ],
      env: {
        ...sim!.nodeEnv,
        // info: the node's start line ("node listening") is how NodeProcess knows it is up.
        LOG_LEVEL: 'info',
        TEST_PROBE_WRITE_MS: '0',
        RATE_LIMIT_PER_MINUTE: '1000000',
        RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
        ALLOW_PRIVATE_URLS: 'true',
        DEFAULT_INSTANCE_QUOTA: String(N + 10),
        CONNECT_RATE_PER_SECOND: String(CONNECT_RATE),
        ...extra,
      },
    });
  try {
    sim = await startTestSimulator();
    redis = await startRedisServer();
    node = await start();
    const account = await node.api.post('/api/admin/accounts', { name: 'fleet' }, { token: CLUSTER_ADMIN_TOKEN });
    const accountToken = account.body.account.token as string;
    await sleep(2000);
    const steps: { label: string; m: NodeMemory; connected: number; leaseLost: number }[] = [];
    const connected = async () => sampleSum(await scrape(node!), 'switchboard_whatsapp_connected');
    steps.push({
      label: 'none linked',
      m: await nodeMemory(node),
      connected: 0,
      leaseLost: await leaseLostStops(node),
    });
    const half = Math.floor(N / 2);
    const fleet: LinkedInstance[] = [];
    const linkStart = Date.now();
    for (const [from, count] of [
      [0, half],
      [half, N - half],
    ] as const) {
      fleet.push(
        ...(await linkFleet({
          api: node.api,
          accountToken,
          control: sim.control,
          count,
          from,
          book: BOOK,
          concurrency: LINK_CONCURRENCY,
          onLinked: (done) => {
            if (done % 25 === 0) process.stderr.write(`linked ${from + done}/${N}\n`);
          },
        })),
      );
      await sleep(SETTLE_MS);
      const m = await nodeMemory(node);
      steps.push({
        label: `${from + count} linked, idle`,
        m,
        connected: await connected(),
        leaseLost: await leaseLostStops(node),
      });
    }
    const linkSeconds = (Date.now() - linkStart) / 1000;

    // Idle with light traffic.
    const traffic = lightTraffic(sim, fleet);
    await scrape(node); // resets the event-loop delay histogram
    const before = {
      cpu: cpuSeconds(node.pid),
      redis: await redisCommands(redis.url),
      store: sampleSum(await scrape(node), 'switchboard_store_operations_total'),
      at: Date.now(),
    };
    await sleep(IDLE_S * 1000);
    const samples = await scrape(node);
    const sentIdle = traffic.sent();
    const after = {
      cpu: cpuSeconds(node.pid),
      redis: await redisCommands(redis.url),
      store: sampleSum(samples, 'switchboard_store_operations_total'),
      at: Date.now(),
    };
    const seconds = (after.at - before.at) / 1000;
    const cpuUsed =
      after.cpu && before.cpu ? after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system : NaN;
    const loopP99 = sampleSum(samples, 'nodejs_eventloop_lag_p99_seconds') * 1000;

    // Soak: memory after GC every minute, traffic on.
    const soak: [number, number][] = [];
    const soakHeap: [number, number][] = [];
    let soakPauseMs = 0;
    for (let minute = 1; minute <= SOAK_MIN; minute++) {
      await sleep(60_000);
      const m = await nodeMemory(node);
      soak.push([minute, m.rss]);
      soakHeap.push([minute, m.heapUsed]);
      soakPauseMs = Math.max(soakPauseMs, m.gcPauseMs);
      process.stderr.write(
        `soak minute ${minute}: RSS ${mb(m.rss)} MB, heap ${mb(m.heapUsed)} MB, external ${mb(m.external)} MB, actors ${m.actors}, ` +
          `connected ${await connected()}, GC pause ${fmt(m.gcPauseMs, 0)} ms\n`,
      );
      // Right after a collection: the snapshot holds what is kept. Writing it stops the node for a while.
      if (args['heap-snapshot-dir'] && (minute === 1 || minute === SOAK_MIN)) process.kill(node.pid, 'SIGUSR2');
    }
    const leaseLostAfter = await leaseLostStops(node);
    await traffic.stop();

    const [none, halfStep, all] = steps.map((s) => s.m) as [NodeMemory, NodeMemory, NodeMemory];
    const connectedAll = steps[2]!.connected;

    printTable(
      ['step', 'actors', 'connected', 'heap MB', 'external MB', 'RSS MB', 'GC pause ms', 'lease-lost stops'],
      steps.map(({ label, m, connected: c, leaseLost }) => [
        label,
        String(m.actors),
        String(c),
        mb(m.heapUsed),
        mb(m.external),
        mb(m.rss),
        fmt(m.gcPauseMs, 0),
        String(leaseLost),
      ]),
      `One node, Baileys on the simulator, first sync ${BOOK.contacts} contacts, ${BOOK.groups} groups, ${BOOK.messagesPerChat} messages per chat; after full GC`,
    );
    const per = (a: NodeMemory, b: NodeMemory, n: number) => ({
      rss: (b.rss - a.rss) / n,
      heap: (b.heapUsed - a.heapUsed) / n,
      external: (b.external - a.external) / n,
    });
    const whole = per(none, all, connectedAll);
    const marginal = per(halfStep, all, connectedAll - steps[1]!.connected);
    console.log('');
    console.log(
      `per connected instance, none → ${connectedAll}: RSS ${mb(whole.rss)} MB, heap ${mb(whole.heap)} MB, external ${mb(whole.external)} MB ` +
        `(goal RSS ≤ ${GOAL_RSS_MB} MB: ${whole.rss <= GOAL_RSS_MB * 1024 * 1024 ? 'met' : 'MISSED'})`,
    );
    console.log(
      `marginal, ${steps[1]!.connected} → ${connectedAll}: RSS ${mb(marginal.rss)} MB, heap ${mb(marginal.heap)} MB, external ${mb(marginal.external)} MB ` +
        `(goal RSS ≤ ${GOAL_RSS_MB} MB: ${marginal.rss <= GOAL_RSS_MB * 1024 * 1024 ? 'met' : 'MISSED'})`,
    );
    console.log(`linking ${N} took ${fmt(linkSeconds, 1)} s (${LINK_CONCURRENCY} at a time)`);
    console.log(
      `idle ${fmt(seconds, 0)} s with a message per instance per minute (${sentIdle} sent): ` +
        `Redis ${fmt((after.redis - before.redis) / seconds, 1)} commands/s, store ${fmt((after.store - before.store) / seconds, 1)} calls/s, ` +
        `event-loop delay p99 ${fmt(loopP99, 1)} ms, node CPU ${fmt((cpuUsed / seconds) * 100, 1)} % of a core = ` +
        `${fmt(((cpuUsed / seconds) * 100) / connectedAll, 3)} % of a core per idle instance`,
    );
    if (soak.length >= 2) {
      const perMinute = slope(soak);
      const heapPerMinute = slope(soakHeap);
      console.log(
        `soak ${SOAK_MIN} min: RSS slope ${mb(perMinute)} MB/min (${fmt((perMinute * 60) / 1024 / 1024, 1)} MB/h), ` +
          `${fmt(perMinute / 1024 / connectedAll, 2)} KB/min per instance; heap slope ${mb(heapPerMinute)} MB/min, ` +
          `${fmt(heapPerMinute / 1024 / connectedAll, 2)} KB/min per instance (goal: no growth); longest probe GC pause ${fmt(soakPauseMs, 0)} ms`,
      );
    }
    // A node that lost its lease stopped its fleet and brought it back: what was read after that is not of a steady fleet.
    const lostDuring = leaseLostAfter - steps[0]!.leaseLost;
    if (lostDuring > 0) {
      console.log(
        `VOID: the node stopped ${lostDuring} actors for a lost lease during the run; the readings above are not of a steady fleet`,
      );
    }
    // Printed so far: a restart that fails below does not take the figures above with it.
    // Restart with the simulator's login limit on at the pace.
    await node.terminate();
    await sim.control.ok('POST', '/limits', { loginsPerSecond: CONNECT_RATE });
    const refusedBefore = (await sim.control.ok<{ loginsRefused: number }>('GET', '/stats')).loginsRefused;
    node = await start();
    // From the node's first second (the process start itself is not the pacer's).
    const restartAt = Date.now();
    await until(
      async () => ((await connected()) >= N ? true : undefined),
      'all connected after the restart',
      600_000,
      250,
    );
    const restartSeconds = (Date.now() - restartAt) / 1000;
    const refused = (await sim.control.ok<{ loginsRefused: number }>('GET', '/stats')).loginsRefused - refusedBefore;

    const bound = N / CONNECT_RATE + 10;
    console.log(
      `restart with the login limit at ${CONNECT_RATE}/s: all ${N} connected after ${fmt(restartSeconds, 1)} s ` +
        `(goal ≤ N / rate + 10 = ${fmt(bound, 0)} s: ${restartSeconds <= bound ? 'met' : 'MISSED'}), ` +
        `${refused} logins refused (goal 0: ${refused === 0 ? 'met' : 'MISSED'})`,
    );
  } catch (err) {
    // The node's own account of what went wrong (a lost lease, a stall) outlives the run.
    if (node) {
      const log = join(tmpdir(), `switchboard-fleet-node-${process.pid}.log`);
      writeFileSync(log, node.output);
      process.stderr.write(`the node's output: ${log}\n`);
    }
    throw err;
  } finally {
    await node?.terminate().catch(() => undefined);
    await redis?.stop();
    await sim?.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
