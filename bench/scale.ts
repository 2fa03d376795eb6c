/**
 * Idle cost of many instances on a Redis Cluster: what Redis serves, per node and in all, while linked
 * sandbox instances spread over a few node processes do nothing.
 *
 *   npx tsx bench/scale.ts [instances=600] [nodes=3] [window_s=10]
 *
 * Starts a Redis Cluster of six `redis-server` processes (three masters, three replicas) and `nodes` node
 * processes on one SQLite file (REDIS_MODE=cluster), creates and links `instances` sandbox instances through
 * the nodes (32 links at a time, bench/seed-instances.ts), waits until each is owned, then reads every
 * Redis server's INFO counters over a quiet window (bench/redis-traffic.ts, as bench/memory.ts does for one
 * server). Printed: commands/s and script calls/s in all and per node, Redis CPU summed over the six
 * servers, the busiest commands, against the goal of ≤ 50 commands/s per node whatever it owns; then each
 * node's memory after full collections (the test-only probe) over what it owns, against a node of none
 * measured before the links. See bench/README.md.
 */
import { ClusterFixture, sleep } from '../test/cluster/cluster-fixture.js';
import { REDIS_CLUSTER } from '../test/helpers/redis-kinds.js';
import { nodeMemory } from './node-memory.js';
import { printStalls } from './node-stalls.js';
import { idleTraffic } from './redis-traffic.js';
import { seedInstances } from './seed-instances.js';
import { fmt } from './stats.js';

const INSTANCES = Number(process.argv[2] ?? 600);
const NODES = Number(process.argv[3] ?? 3);
const WINDOW_MS = Number(process.argv[4] ?? 10) * 1000;
/** Redis commands per second an idle node may cost, whatever it owns (issue "Redis at scale"). */
const IDLE_COMMANDS_GOAL = 50;
/** Time for the links' after-effects (events, webhook queue, reconciling) to settle. */
const SETTLE_MS = 3000;
const LINK_CONCURRENCY = 32;

async function main(): Promise<void> {
  const c = await ClusterFixture.start(
    NODES,
    // The defaults of a production node, but for the limits a bench's burst of links would hit, and without the
    // test probe's write every 100 ms per actor (at 6,000 actors, 60,000 writes a second on one SQLite file).
    { LEASE_TTL_MS: '2500', RECONCILE_MS: '1000', RATE_LIMIT_PER_MINUTE: '1000000', TEST_PROBE_WRITE_MS: '0' },
    REDIS_CLUSTER,
  );
  try {
    const empty = await Promise.all(c.nodes.map(nodeMemory));
    const started = performance.now();
    await seedInstances(c, INSTANCES, {
      concurrency: LINK_CONCURRENCY,
      onLinked: (done) => process.stderr.write(`linked ${done}/${INSTANCES}\n`),
    });
    await c.waitAllOwned(600_000);
    process.stderr.write(
      `${INSTANCES} instances linked and owned in ${fmt((performance.now() - started) / 1000, 1)} s\n`,
    );
    await sleep(SETTLE_MS);
    const servers = c.backend.cluster!.servers.map((s) => s.url);
    const t = await idleTraffic(servers, WINDOW_MS);
    const owners = await c.owners();
    const perNode = c.nodes.map((n) => owners.filter((o) => o === n.nodeId).length);
    console.log(
      `Redis Cluster (3 masters, 3 replicas), ${NODES} nodes, ${INSTANCES} idle instances (per node: ${perNode.join(', ')}), ` +
        `over ${WINDOW_MS / 1000} s:`,
    );
    console.log(
      `  in all: ${fmt(t.commands, 1)} commands/s (${fmt(t.scripts, 1)} script calls/s, ${fmt(t.scriptMs, 3)} ms each), ` +
        `Redis CPU ${fmt(t.redisCpuPct, 2)} % (six servers), in ${fmt(t.bytesIn / 1024, 1)} KB/s, out ${fmt(t.bytesOut / 1024, 1)} KB/s`,
    );
    const each = t.commands / NODES;
    console.log(
      `  per node: ${fmt(each, 1)} commands/s, ${fmt(t.redisCpuPct / NODES, 2)} % Redis CPU; ` +
        `goal ≤ ${IDLE_COMMANDS_GOAL} commands/s per node: ${each <= IDLE_COMMANDS_GOAL ? 'met' : 'MISSED'}`,
    );
    console.log(`  busiest commands/s: ${t.top.map(([n, r]) => `${n} ${fmt(r, 1)}`).join(', ')}`);
    const kb = (bytes: number) => fmt(bytes / 1024, 1);
    const full = await Promise.all(c.nodes.map(nodeMemory));
    c.nodes.forEach((n, i) => {
      const [before, after] = [empty[i]!, full[i]!];
      const per = (x: number, y: number) => kb((y - x) / Math.max(1, after.actors));
      console.log(
        `  ${n.nodeId}: ${after.actors} actors, RSS ${fmt(after.rss / 1024 / 1024, 0)} MB (empty ${fmt(before.rss / 1024 / 1024, 0)} MB), ` +
          `per instance RSS ${per(before.rss, after.rss)} KB, heap ${per(before.heapUsed, after.heapUsed)} KB`,
      );
    });
  } finally {
    printStalls(c.nodes);
    await c.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
