/**
 * What the API answers while Redis is away, and how long the cluster takes to recover.
 *
 *   npx tsx bench/outage.ts [kill|pause] [outageSeconds=10] [instances=30]
 *
 * Three node processes with the production lease TTL (5 s) on one redis-server and one SQLite file
 * (test/cluster/cluster-fixture.ts). A steady probe sends, every 100 ms, one request of each kind to the
 * nodes in turn: a store-backed read (GET /api/instance/getSettings/:instance), an actor call
 * (POST /api/cluster/probe/:instance {op: describe}), GET /health and GET /metrics. After 5 s Redis goes
 * away for `outageSeconds`, then 25 s more are observed:
 * - `kill`: SIGKILL, then a fresh empty redis-server on the same port (a crash without persistence: every
 *   lease, owner key and queued delivery is gone; connections are refused meanwhile);
 * - `pause`: SIGSTOP, then SIGCONT (a hung Redis: connections stay open, nothing answers; then it resumes
 *   with its data).
 * Prints, per second, the statuses each kind got, and the times of the first failure and the recovery.
 * See docs/operations.md ("Redis is down").
 */
import { ClusterFixture, sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from '../test/cluster/node-process.js';
import { printTable } from './stats.js';

const mode = process.argv[2] === 'pause' ? 'pause' : 'kill';
const outageMs = Number(process.argv[3] ?? 10) * 1000;
const instanceCount = Number(process.argv[4] ?? 30);
const BEFORE_MS = 5000;
const AFTER_MS = 25_000;
const PERIOD_MS = 100;
const REQUEST_TIMEOUT_MS = 10_000;

type Kind = 'settings read' | 'actor call' | 'health' | 'metrics';
const KINDS: Kind[] = ['settings read', 'actor call', 'health', 'metrics'];

interface Sample {
  kind: Kind;
  /** ms since the start of the probe, when the request was sent */
  at: number;
  status: number | 'timeout' | 'error';
  code?: string;
  ms: number;
}

async function main(): Promise<void> {
  const fixture = await ClusterFixture.start(3, {
    LEASE_TTL_MS: '5000',
    RECONCILE_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    TEST_PROBE_WRITE_MS: '0',
  });
  try {
    await fixture.seed(instanceCount);
    await fixture.waitSettled(30_000);
    const names = fixture.instanceIds.map((_, i) => `inst-${i}`);
    const token = fixture.accountToken;
    console.log(`3 nodes, ${names.length} linked instances, all on placement; probing every ${PERIOD_MS} ms`);

    const samples: Sample[] = [];
    const started = performance.now();
    let stop = false;
    let seq = 0;
    const send = async (kind: Kind): Promise<void> => {
      const i = seq++;
      const node = fixture.nodes[i % fixture.nodes.length]!;
      const name = names[i % names.length]!;
      const at = performance.now() - started;
      const request =
        kind === 'settings read'
          ? node.api.request('GET', `/api/instance/getSettings/${name}`, undefined, { token, headers: {} })
          : kind === 'actor call'
            ? node.api.post(`/api/cluster/probe/${name}`, { op: 'describe' }, { token })
            : kind === 'health'
              ? node.api.get('/health')
              : node.api.get('/metrics', { token: CLUSTER_ADMIN_TOKEN });
      const timeout = sleep(REQUEST_TIMEOUT_MS).then(() => 'timeout' as const);
      try {
        const res = await Promise.race([request, timeout]);
        const ms = performance.now() - started - at;
        if (res === 'timeout') samples.push({ kind, at, status: 'timeout', ms });
        else {
          samples.push({
            kind,
            at,
            status: res.status,
            ms,
            ...(res.body?.error?.code ? { code: String(res.body.error.code) } : {}),
          });
        }
      } catch {
        samples.push({ kind, at, status: 'error', ms: performance.now() - started - at });
      }
    };
    const inFlight = new Set<Promise<void>>();
    const loop = (async () => {
      while (!stop) {
        for (const kind of KINDS) {
          const p = send(kind).finally(() => inFlight.delete(p));
          inFlight.add(p);
        }
        await sleep(PERIOD_MS);
      }
    })();

    await sleep(BEFORE_MS);
    const killedAt = performance.now() - started;
    if (mode === 'kill') await fixture.redis.kill9();
    else fixture.redis.pause();
    console.log(`redis-server ${mode === 'kill' ? 'killed' : 'paused'} at ${(killedAt / 1000).toFixed(1)} s`);
    await sleep(outageMs);
    if (mode === 'kill') await fixture.redis.restart();
    else fixture.redis.resume();
    const restartedAt = performance.now() - started;
    console.log(
      `redis-server ${mode === 'kill' ? 'restarted empty' : 'resumed'} at ${(restartedAt / 1000).toFixed(1)} s`,
    );
    const reowned = await fixture.waitAllOwned(AFTER_MS).then(
      (ms) => `all ${names.length} instances owned again ${(ms / 1000).toFixed(2)} s after Redis returned`,
      (err: Error) => `NOT all owned again: ${err.message}`,
    );
    const left = AFTER_MS - (performance.now() - started - restartedAt);
    if (left > 0) await sleep(left);
    stop = true;
    await loop;
    await Promise.all([...inFlight]);

    // Per second: "200×10", "500×3 503×7", …
    const seconds = Math.ceil((performance.now() - started) / 1000);
    const rows: string[][] = [];
    for (let s = 0; s < seconds; s++) {
      const phase = s * 1000 < killedAt ? 'up' : s * 1000 < restartedAt ? 'DOWN' : 'back';
      const cells = KINDS.map((kind) => {
        const counts = new Map<string, number>();
        for (const x of samples) {
          if (x.kind !== kind || x.at < s * 1000 || x.at >= (s + 1) * 1000) continue;
          const key = x.code ? `${x.status}/${x.code}` : String(x.status);
          counts.set(key, (counts.get(key) ?? 0) + 1);
        }
        return [...counts.entries()].map(([k, n]) => `${k}×${n}`).join(' ');
      });
      rows.push([`${s}`, phase, ...cells]);
    }
    printTable(
      ['s', 'redis', ...KINDS],
      rows,
      'Answers per second, by status (and error code), requests counted in the second they were sent',
    );

    const summaryRows = KINDS.map((kind) => {
      const mine = samples.filter((x) => x.kind === kind);
      const firstBad = mine.find((x) => x.at >= killedAt && x.status !== 200);
      const lastBad = [...mine].reverse().find((x) => x.status !== 200);
      const slowest = Math.max(...mine.filter((x) => x.at >= killedAt && x.at < restartedAt).map((x) => x.ms));
      return [
        kind,
        firstBad ? `${((firstBad.at - killedAt) / 1000).toFixed(2)} s` : 'never',
        lastBad ? `${((lastBad.at + lastBad.ms - restartedAt) / 1000).toFixed(2)} s` : '–',
        `${(slowest / 1000).toFixed(2)} s`,
        String(mine.filter((x) => x.status !== 200).length),
      ];
    });
    printTable(
      [
        'kind',
        `first failure after ${mode}`,
        'last failure after return',
        'slowest answer sent while down',
        'failures',
      ],
      summaryRows,
      `Outage (${mode}) of ${outageMs / 1000} s`,
    );
    console.log(reowned);
  } finally {
    if (mode === 'pause') fixture.redis.resume();
    await fixture.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
