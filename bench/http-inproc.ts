/**
 * The node's request handling without sockets: builds of the node and the libraries' own floor
 * (bench/bare-koa-app.ts) in one process, each request handed to the server's request handler as Node's
 * own `IncomingMessage` and `ServerResponse`, one at a time, the builds alternating in rounds.
 *
 *   npx tsx bench/http-inproc.ts [--paths=settings,describe] [--rounds=9] [--requests=5000] [--profile] [dist dir ...]
 *
 * Each dist dir is a build (`npm run build` in a checkout of that revision; a checkout made with
 * `git worktree add` can link this one's node_modules); none given: this checkout's, built first. Every
 * build runs embedded (SQLite in a temporary directory, the sandbox driver) with one instance, and is
 * sent the same requests as bench/http.ts: getSettings, and describe (`POST /api/cluster/probe/:instance`).
 *
 * What it measures is the process's CPU time per request, JavaScript and Node's HTTP objects, and not
 * the kernel's socket work nor a load generator sharing the cores: on a shared virtual machine that
 * work moves a socket bench's figures by a third from run to run, and these by a few per cent. It is
 * the bench for the before and after of a change to the request path; bench/http.ts stays the figure
 * against bare Koa over real connections. With `--profile` it then runs each path once more under the
 * sampling profiler, on the first build and on the floor, and prints where the difference goes, module by
 * module (bench/profile-by-module.ts). See bench/README.md.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import type { IncomingMessage as Request, ServerResponse as Response } from 'node:http';
import { IncomingMessage, ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';
import { pino } from 'pino';
import type { loadConfig as LoadConfig } from '../src/config/config.js';
import type { startNode as StartNode } from '../src/node.js';
import { ADMIN_TOKEN, testNodeEnv } from '../test/helpers/test-node.js';
import { bareKoaApp } from './bare-koa-app.js';
import { NO_LIMIT } from './http-load.js';
import { selfTimeByModule } from './profile-by-module.js';
import { median, printTable } from './stats.js';

const options = new Map(
  process.argv
    .slice(2)
    .filter((a) => a.startsWith('--'))
    .map((a) => a.slice(2).split('=') as [string, string]),
);
const PATHS = (options.get('paths') ?? 'settings,describe').split(',');
const ROUNDS = Number(options.get('rounds') ?? 9);
const REQUESTS = Number(options.get('requests') ?? 5000);
const PROFILE = options.has('profile');
/** The modules a profile table shows: those that add the most over the floor. */
const PROFILE_ROWS = 20;

type Handler = (req: Request, res: Response) => unknown;

interface Side {
  name: string;
  handler: Handler;
  token: string;
  close?: () => Promise<void>;
}

interface PathSpec {
  method: 'GET' | 'POST';
  url: string;
  body?: Buffer;
}

const PATH_SPECS: Record<string, PathSpec> = {
  settings: { method: 'GET', url: '/api/instance/getSettings/bench' },
  describe: { method: 'POST', url: '/api/cluster/probe/bench', body: Buffer.from('{"op":"describe"}') },
};

/**
 * What stands for the request's connection: a stream that stays open. An unconnected `net.Socket` would
 * close at once, and every request would then pay for a "premature close" error that real ones never see.
 */
function connection(): Socket {
  return Object.assign(new PassThrough(), {
    destroy: () => undefined,
    setTimeout: () => undefined,
  }) as unknown as Socket;
}

/** One request through `side`'s handler; resolves with the status once the response has ended. */
function send(side: Side, path: PathSpec): Promise<number> {
  return new Promise((done) => {
    const req = new IncomingMessage(connection());
    req.method = path.method;
    req.url = path.url;
    req.headers = {
      host: '127.0.0.1',
      'user-agent': 'http-inproc',
      token: side.token,
      ...(path.body ? { 'content-type': 'application/json', 'content-length': String(path.body.length) } : {}),
    };
    if (path.body) req.push(path.body);
    req.push(null);
    const res = new ServerResponse(req);
    const end = res.end.bind(res) as (...args: unknown[]) => Response;
    res.end = ((...args: unknown[]) => {
      const ended = end(...args);
      done(res.statusCode);
      return ended;
    }) as Response['end'];
    side.handler(req, res);
  });
}

/** CPU µs per request of `count` requests sent one after another. */
async function cpuPerRequest(side: Side, path: PathSpec, count: number): Promise<number> {
  const before = process.cpuUsage();
  for (let i = 0; i < count; i++) await send(side, path);
  const used = process.cpuUsage(before);
  return (used.user + used.system) / count;
}

/** A build's node, embedded, with an account and its instance `bench`; the side sends that instance's token. */
async function startBuild(dist: string, dirs: string[]): Promise<Side & { settings: unknown; described: unknown }> {
  const { startNode } = (await import(pathToFileURL(join(dist, 'node.js')).href)) as { startNode: typeof StartNode };
  const { loadConfig } = (await import(pathToFileURL(join(dist, 'config', 'config.js')).href)) as {
    loadConfig: typeof LoadConfig;
  };
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-inproc-'));
  dirs.push(dir);
  const config = loadConfig({
    ...testNodeEnv(dir),
    ...NO_LIMIT,
    TEST_PROBE_FILE: join(dir, 'probe.jsonl'),
    TEST_PROBE_WRITE_MS: '0',
  });
  const node = await startNode(config, { logger: pino({ level: 'silent' }) });
  const post = async (path: string, body: unknown, token: string) => {
    const res = await fetch(`${node.url}${path}`, {
      method: 'POST',
      headers: { token, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    if (res.status >= 300) throw new Error(`${dist}: POST ${path}: ${res.status} ${await res.text()}`);
    return (await res.json()) as Record<string, Record<string, unknown>>;
  };
  const account = await post('/api/admin/accounts', { name: 'bench' }, ADMIN_TOKEN);
  const created = await post('/api/instance/new', { name: 'bench' }, account.account!.token as string);
  const token = created.instance!.token as string;
  const settings = await (await fetch(`${node.url}${PATH_SPECS.settings!.url}`, { headers: { token } })).json();
  const described = await post(PATH_SPECS.describe!.url, { op: 'describe' }, token);
  return {
    name: dist,
    handler: node.server.listeners('request')[0] as Handler,
    token,
    close: () => node.close(),
    settings,
    described,
  };
}

/** The first build's and the floor's self time per request by module, sorted by what the build adds. */
async function profileRows(build: Side, floor: Side, path: PathSpec): Promise<string[][]> {
  const [mine, theirs] = [new Map<string, number>(), new Map<string, number>()];
  // Alternating rounds, summed: one profile of each would carry the machine's drift between the two.
  for (let round = 0; round < ROUNDS; round++) {
    const runs = [
      () => selfTimeByModule(() => cpuPerRequest(build, path, REQUESTS).then(() => undefined), mine),
      () => selfTimeByModule(() => cpuPerRequest(floor, path, REQUESTS).then(() => undefined), theirs),
    ];
    for (const run of round % 2 === 0 ? runs : runs.reverse()) await run();
  }
  const requests = REQUESTS * ROUNDS;
  const perRequest = (totals: Map<string, number>, source: string) => (totals.get(source) ?? 0) / requests;
  const sum = (totals: Map<string, number>) => [...totals.values()].reduce((a, b) => a + b, 0) / requests;
  const sources = [...new Set([...mine.keys(), ...theirs.keys()])]
    .map((source) => ({ source, build: perRequest(mine, source), floor: perRequest(theirs, source) }))
    .sort((a, b) => b.build - b.floor - (a.build - a.floor));
  const row = (source: string, a: number, b: number) => [source, a.toFixed(2), b.toFixed(2), (a - b).toFixed(2)];
  return [
    row('(all)', sum(mine), sum(theirs)),
    ...sources.slice(0, PROFILE_ROWS).map((s) => row(s.source, s.build, s.floor)),
  ];
}

async function main(): Promise<void> {
  let dists = process.argv.slice(2).filter((a) => !a.startsWith('--'));
  if (dists.length === 0) {
    execFileSync('npm', ['run', 'build'], { stdio: ['ignore', 'ignore', 'inherit'] });
    dists = ['dist'];
  }
  const dirs: string[] = [];
  const sides: Side[] = [];
  try {
    for (const dist of dists) sides.push(await startBuild(resolve(dist), dirs));
    const first = sides[0] as Side & { settings: unknown; described: unknown };
    sides.push({
      name: 'floor: Koa, @koa/router, koa-body',
      handler: bareKoaApp(first.settings, first.described).callback(),
      token: '',
    });
    const rows: string[][] = [];
    const profiles: { name: string; rows: string[][] }[] = [];
    for (const name of PATHS) {
      const path = PATH_SPECS[name];
      if (!path) throw new Error(`unknown path ${name} (settings or describe)`);
      for (const side of sides) {
        const status = await send(side, path);
        if (status !== 200) throw new Error(`${side.name}: ${name} answered ${status}`);
        await cpuPerRequest(side, path, REQUESTS);
      }
      const figures = sides.map(() => [] as number[]);
      for (let round = 0; round < ROUNDS; round++) {
        const order = round % 2 === 0 ? [...sides.keys()] : [...sides.keys()].reverse();
        for (const i of order) figures[i]!.push(await cpuPerRequest(sides[i]!, path, REQUESTS));
      }
      const firstMedian = median(figures[0]!);
      const floorMedian = median(figures.at(-1)!);
      for (const [i, side] of sides.entries()) {
        const m = median(figures[i]!);
        rows.push([
          name,
          side.name,
          figures[i]!.map((x) => x.toFixed(0)).join(' '),
          m.toFixed(1),
          (m / firstMedian).toFixed(3),
          (floorMedian / m).toFixed(2),
        ]);
      }
      if (PROFILE) profiles.push({ name, rows: await profileRows(first, sides.at(-1)!, path) });
    }
    printTable(
      ['path', 'build', 'CPU µs/req by round', 'median', '÷ first', 'floor ÷ it'],
      rows,
      `Requests handled in-process, one at a time: ${REQUESTS} per run, ${ROUNDS} alternating rounds, CPU µs per request`,
    );
    process.stdout.write(
      "÷ first: the median over the first build's. floor ÷ it: the floor's median over this one's (what share of its cost the libraries alone take).\n",
    );
    for (const p of profiles) {
      printTable(
        ['module', `${first.name} µs/req`, 'floor µs/req', 'difference'],
        p.rows,
        `${p.name}: self time by module under the sampling profiler, ${ROUNDS} alternating rounds of ${REQUESTS} requests each, the ${PROFILE_ROWS} that add most`,
      );
    }
  } finally {
    for (const side of sides) await side.close?.();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  // Each node's timers (billing cron, sweepers) would otherwise hold the process.
  process.exit(0);
}

await main();
