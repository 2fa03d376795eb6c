/**
 * HTTP front-end bench: bare Koa, Switchboard embedded (SQLite, in-process leases) and Switchboard in
 * cluster mode (one node on Redis), measured in one run by the same client, autocannon, with 16 and 64
 * keep-alive connections.
 *
 *   npx tsx bench/http.ts [seconds per run = 5] [pairs = 1]
 *
 * The nodes run the build (`npm run build`, into dist/), as `npm start` does.
 * Paths: `GET /` of bare Koa (a small JSON object); bare Koa answering getSettings' body with an API
 * response's headers (what the answer's shape alone costs Koa), then through `@koa/router` and, with
 * describe's answer, koa-body (what the libraries the routes use cost on their own); `GET /health`; `GET /api/instance/getSettings/:instance`
 * (a store-served read with authentication); `POST /api/cluster/probe/:instance {"op":"describe"}` (an
 * actor call on the owner, which is the node itself). Every run of a path is preceded by a run of bare Koa
 * at the same connection count, and the path's ratio is to that run, so that drift of the machine's speed
 * during the bench hits both sides of a ratio alike; with `pairs` > 1 each path runs that many times, each
 * after its own bare Koa run, and a row gives the medians (and the range of the pairs' ratios). Printed:
 * req/s, p50 and p99 latency, non-2xx count, the adjacent bare Koa req/s and the ratio. See bench/README.md.
 */
import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NodeProcess } from '../test/cluster/node-process.js';
import { startRedisServer } from '../test/helpers/redis-server.js';
import type { RedisServer } from '../test/helpers/redis-server.js';
import { NO_LIMIT, linkedInstance, load, targetsOf } from './http-load.js';
import type { Load, Target } from './http-load.js';
import { fmt, median, printTable } from './stats.js';

const SECONDS = Number(process.argv[2] ?? 5);
/** Runs of each path at each connection count, each after its own bare Koa run; figures are their medians. */
const PAIRS = Number(process.argv[3] ?? 1);
const SHAPED = "bare Koa, getSettings' answer";
const STACK_SETTINGS = "Koa + @koa/router, getSettings' answer";
const STACK_DESCRIBE = "Koa + @koa/router + koa-body, describe's answer";
const CONNECTIONS = [16, 64];
/** The highest value the configuration accepts: the bench measures the front end, not the limiter's 429s. */

interface Row extends Load {
  /** Bare Koa's run just before this one (with pairs, the median of those runs). */
  bare: { rps: number; cpuUs: number | undefined };
  /** Each pair's req/s ratio and CPU ratio to its bare Koa run. */
  ratios: number[];
  cpuRatios: number[];
}

const medianOf = (values: (number | undefined)[]) =>
  values.some((v) => v === undefined) ? undefined : median(values as number[]);

/** One row from `pairs` runs of a path, each with the bare Koa run before it: medians of each figure. */
function rowOf(pairs: { bare: Load; run: Load }[]): Row {
  const runs = pairs.map((p) => p.run);
  return {
    target: runs[0]!.target,
    connections: runs[0]!.connections,
    rps: median(runs.map((r) => r.rps)),
    p50: median(runs.map((r) => r.p50)),
    p99: median(runs.map((r) => r.p99)),
    errors: runs.reduce((sum, r) => sum + r.errors, 0),
    cpuUs: medianOf(runs.map((r) => r.cpuUs)),
    userUs: medianOf(runs.map((r) => r.userUs)),
    bare: { rps: median(pairs.map((p) => p.bare.rps)), cpuUs: medianOf(pairs.map((p) => p.bare.cpuUs)) },
    ratios: pairs.map((p) => p.run.rps / p.bare.rps),
    cpuRatios: pairs.flatMap((p) =>
      p.run.cpuUs === undefined || p.bare.cpuUs === undefined ? [] : [p.bare.cpuUs / p.run.cpuUs],
    ),
  };
}

/** The median of a pair's ratios, with their range when there are several. */
function ratioCell(ratios: number[]): string {
  if (ratios.length === 0) return '-';
  const sorted = [...ratios].sort((x, y) => x - y);
  return sorted.length === 1 ? fmt(sorted[0]!) : `${fmt(median(sorted))} (${fmt(sorted[0]!)}–${fmt(sorted.at(-1)!)})`;
}

/** Builds the sources with `npm run build` (into dist/, as `npm start` does); returns the entry point. */
function build(): string {
  execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
  return join('dist', 'main.js');
}

/**
 * Bare Koa (bench/bare-koa-app.ts); its `/shaped` answers `shapedBody` with the headers of an API
 * response, and the node's getSettings and probe paths the same and `describeBody` through the routing
 * and body libraries the node uses.
 */
async function startBareKoa(shapedBody: string, describeBody: string): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/bare-koa.ts'], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, SHAPED_BODY: shapedBody, DESCRIBE_BODY: describeBody },
  });
  const port = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (c: Buffer) => {
      out += c.toString();
      const m = /listening (\d+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', (code) => reject(new Error(`bare Koa exited ${code}`)));
  });
  return { url: `http://127.0.0.1:${port}`, child };
}

async function main(): Promise<void> {
  const dirs: string[] = [];
  const children: ChildProcess[] = [];
  const nodes: NodeProcess[] = [];
  let redis: RedisServer | undefined;
  try {
    const builtMain = build();
    const embeddedDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-http-'));
    dirs.push(embeddedDir);
    const embedded = await NodeProcess.start({
      nodeId: 'embedded',
      dataDir: embeddedDir,
      probeFile: join(embeddedDir, 'probe.jsonl'),
      env: { ...NO_LIMIT, TEST_PROBE_WRITE_MS: '0' },
      builtMain,
    });
    nodes.push(embedded);
    redis = await startRedisServer();
    const clusterDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-http-'));
    dirs.push(clusterDir);
    const cluster = await NodeProcess.start({
      nodeId: 'cluster',
      redisUrl: redis.url,
      dataDir: clusterDir,
      probeFile: join(clusterDir, 'probe.jsonl'),
      env: { ...NO_LIMIT, TEST_PROBE_WRITE_MS: '0' },
      builtMain,
    });
    nodes.push(cluster);
    const embeddedToken = await linkedInstance(embedded);
    // Bare Koa answers getSettings' very body on /shaped, with the headers of an API response.
    const settings = await fetch(`${embedded.url}/api/instance/getSettings/bench`, {
      headers: { token: embeddedToken },
    });
    const [describeTarget] = targetsOf('embedded', embedded, embeddedToken).filter((t) => t.method === 'POST');
    const described = await fetch(describeTarget!.url, {
      method: 'POST',
      headers: { token: embeddedToken, 'content-type': 'application/json' },
      body: describeTarget!.body!,
    });
    const bare = await startBareKoa(await settings.text(), await described.text());
    children.push(bare.child);
    const baseline: Target = { name: 'bare Koa GET /', pid: bare.child.pid!, url: `${bare.url}/`, method: 'GET' };
    const shaped: Target = { name: SHAPED, pid: bare.child.pid!, url: `${bare.url}/shaped`, method: 'GET' };
    const stackSettings: Target = {
      name: STACK_SETTINGS,
      pid: bare.child.pid!,
      url: `${bare.url}/api/instance/getSettings/bench`,
      method: 'GET',
    };
    const stackDescribe: Target = {
      name: STACK_DESCRIBE,
      pid: bare.child.pid!,
      url: `${bare.url}/api/cluster/probe/bench`,
      method: 'POST',
      body: describeTarget!.body!,
    };
    const targets: Target[] = [
      shaped,
      stackSettings,
      stackDescribe,
      ...targetsOf('embedded', embedded, embeddedToken),
      ...targetsOf('cluster', cluster, await linkedInstance(cluster)),
    ];
    // Warm-up: JIT, connection pools, statement caches.
    for (const t of [baseline, ...targets]) await load(t, 16, 1);
    const rows: Row[] = [];
    for (const connections of CONNECTIONS) {
      for (const t of targets) {
        const pairs: { bare: Load; run: Load }[] = [];
        for (let pair = 0; pair < PAIRS; pair++) {
          const bare = await load(baseline, connections, SECONDS);
          const run = await load(t, connections, SECONDS);
          pairs.push({ bare, run });
          process.stderr.write(
            `${t.name} @${connections}: ${Math.round(run.rps)} req/s (bare Koa ${Math.round(bare.rps)})\n`,
          );
        }
        rows.push(rowOf(pairs));
      }
    }
    const cpu = (us: number | undefined) => (us === undefined ? '-' : us.toFixed(0));
    printTable(
      [
        'path',
        'conns',
        'req/s',
        'p50 ms',
        'p99 ms',
        'non-2xx',
        'bare req/s',
        '× bare',
        'CPU µs/req',
        'bare µs/req',
        '× bare (CPU)',
      ],
      rows.map((r) => [
        r.target,
        String(r.connections),
        String(Math.round(r.rps)),
        fmt(r.p50),
        fmt(r.p99),
        String(r.errors),
        String(Math.round(r.bare.rps)),
        ratioCell(r.ratios),
        cpu(r.cpuUs),
        cpu(r.bare.cpuUs),
        ratioCell(r.cpuRatios),
      ]),
      `HTTP front end, ${SECONDS} s per run, one client (autocannon) on the same machine; each path's ratios are to the bare Koa run just before it` +
        (PAIRS > 1 ? `; ${PAIRS} such pairs per row, medians (ratios: median and range of the pairs')` : ''),
    );
    process.stdout.write(
      "× bare: req/s over bare Koa's. × bare (CPU): bare Koa's CPU time per request over the path's, in the serving process only (Redis's share not counted): the req/s ratio a saturated core would give, and far less sensitive to other load on the machine.\n",
    );
    // What the answer's shape and the libraries cost Koa itself, apart from what the node's code does.
    for (const connections of CONNECTIONS) {
      const at = rows.filter((r) => r.connections === connections);
      const cpuOf = (name: string) => at.find((r) => r.target === name)?.cpuUs;
      for (const [floor, path, what] of [
        [SHAPED, 'getSettings', "its body and the API's headers"],
        [STACK_SETTINGS, 'getSettings', 'the same through @koa/router'],
        [STACK_DESCRIBE, 'describe (actor call)', 'through @koa/router and koa-body'],
      ] as const) {
        const floorCpu = cpuOf(floor);
        if (floorCpu === undefined) continue;
        const versus = at
          .filter((r) => r.target.endsWith(path) && r.cpuUs !== undefined)
          .map((r) => `${r.target} ${fmt(floorCpu / r.cpuUs!)}`);
        process.stdout.write(`@${connections}: CPU per request of ${floor} (${what}) over ${versus.join(', ')}\n`);
      }
    }
  } finally {
    await Promise.all(nodes.map((n) => n.terminate().catch(() => undefined)));
    for (const c of children) c.kill('SIGTERM');
    await redis?.stop();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}

await main();
