/**
 * Mixed load on a three-node cluster: throughput, latency per call type, errors, memory per instance.
 *
 *   npx tsx bench/cluster-load.ts [seconds=60] [instances=1000] [inFlight=48]
 *
 * Three node processes on one redis-server and one SQLite file (test/cluster/cluster-fixture.ts), the
 * production lease TTL (5 s). `instances` sandbox instances are created in the store, each with a webhook
 * for `message.exchange` to a local receiver, then connected and linked through the nodes (a real sandbox
 * link, as a phone would). Then `inFlight` closed-loop clients send, for `seconds`, a mix of requests to
 * random instances through random nodes (so about 2/3 of the actor calls are routed to another node):
 * 30 % settings reads, 10 % settings writes (saved, then applied by the owner), 30 % text sends, 30 %
 * inbound messages from a contact; every send and inbound message is a `message.exchange` event POSTed to
 * the receiver. After the load the bench waits for the webhook queue to drain and checks that every
 * message's event arrived once. Every answer must be 2xx and every event must arrive (errors: 0), or the
 * bench exits with status 1. Memory: each node's RSS and V8 heap after full collections (the test-only
 * probe) when idle, after linking and after the load, divided by the instances it owns; the heap per idle
 * instance is printed against its goal, 50 KB. See bench/README.md.
 */
import { randomInt } from 'node:crypto';
import { Agent, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { AccountService } from '../src/accounts/account-service.js';
import { InstanceService } from '../src/instances/instance-service.js';
import { SecretBox } from '../src/security/secret-box.js';
import { ClusterFixture, sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN, CLUSTER_ENCRYPTION_KEY } from '../test/cluster/node-process.js';
import type { NodeProcess } from '../test/cluster/node-process.js';
import { apiCall } from './http-client.js';
import { fmt, printTable, summary } from './stats.js';

const SECONDS = Number(process.argv[2] ?? 60);
const INSTANCES = Number(process.argv[3] ?? 1000);
const IN_FLIGHT = Number(process.argv[4] ?? 48);
const LINK_CONCURRENCY = 32;
const DRAIN_LIMIT_MS = 60_000;
/** Issue "Speed": V8 heap per linked, idle instance after a full collection. */
const GOAL_KB = 50;

type Kind = 'settings read' | 'settings write' | 'text send' | 'inbound message';
const MIX: [Kind, number][] = [
  ['settings read', 30],
  ['settings write', 10],
  ['text send', 30],
  ['inbound message', 30],
];

const agent = new Agent({ keepAlive: true, maxSockets: IN_FLIGHT + LINK_CONCURRENCY });

const call = (base: string, method: string, path: string, token: string, body?: unknown) =>
  apiCall(agent, new URL(path, base), method, token, body === undefined ? undefined : JSON.stringify(body));

/** The webhook receiver: message.exchange events by message id, with their emit-to-receipt latency. */
async function startReceiver() {
  const events = new Map<string, number>();
  const latencies: number[] = [];
  let duplicates = 0;
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { event: string; data: { id: string; timestamp: string } };
      if (body.event === 'message.exchange') {
        if (events.has(body.data.id)) duplicates++;
        events.set(body.data.id, (events.get(body.data.id) ?? 0) + 1);
        latencies.push(Date.now() - Date.parse(body.data.timestamp));
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    events,
    latencies,
    duplicates: () => duplicates,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

interface Memory {
  rss: number;
  heap: number;
  owned: number;
}

/** A node's memory after full collections (the test-only probe), and the actors it runs. */
async function memory(node: NodeProcess): Promise<Memory> {
  const res = await call(node.url, 'POST', '/api/cluster/probe-heap', CLUSTER_ADMIN_TOKEN);
  if (res.status !== 200) throw new Error(`probe-heap on ${node.nodeId}: ${res.status}`);
  const m = JSON.parse(res.text) as { heapUsed: number; rss: number; actors: number };
  return { rss: m.rss, heap: m.heapUsed, owned: m.actors };
}

const mb = (bytes: number) => fmt(bytes / 1024 / 1024, 1);
const kb = (bytes: number) => fmt(bytes / 1024, 1);

async function main(): Promise<void> {
  const receiver = await startReceiver();
  const fixture = await ClusterFixture.start(3, {
    LEASE_TTL_MS: '5000',
    RECONCILE_MS: '1000',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
    ALLOW_PRIVATE_URLS: 'true',
    TEST_PROBE_WRITE_MS: '0',
  }).catch(async (err: unknown) => {
    await receiver.close();
    throw err;
  });
  const errors: string[] = [];
  try {
    const nodes = fixture.nodes;
    const idle = await Promise.all(nodes.map(memory));

    // Seed: account and instances straight in the store (each with its webhook), then a real sandbox link.
    const seedStarted = performance.now();
    const { account, token } = await new AccountService(fixture.store, INSTANCES + 10).create({
      name: `load-${Date.now()}`,
    });
    const instances = new InstanceService({
      store: fixture.store,
      secrets: new SecretBox(Buffer.from(CLUSTER_ENCRYPTION_KEY, 'hex')),
      allowPrivateUrls: true,
      logger: pino({ level: 'silent' }),
    });
    const names = Array.from({ length: INSTANCES }, (_, i) => `load-${i}`);
    for (const name of names) {
      await instances.create(account, {
        name,
        webhookEnabled: true,
        webhookURL: receiver.url,
        webhookEvents: ['message.exchange'],
      });
    }
    let next = 0;
    const linker = async () => {
      for (let i = next++; i < names.length; i = next++) {
        const node = nodes[i % nodes.length]!;
        const connect = await call(node.url, 'GET', `/api/instance/connect/${names[i]}`, token);
        const link = await call(node.url, 'POST', `/api/sandbox/link/${names[i]}`, token, {
          number: `5511${String(70_000_000 + i)}`,
        });
        if (connect.status !== 200 || link.status !== 200) {
          throw new Error(`linking ${names[i]}: ${connect.status} ${link.status} ${link.text}`);
        }
      }
    };
    await Promise.all(Array.from({ length: LINK_CONCURRENCY }, linker));
    await fixture.waitAllOwned(
      30_000,
      (await fixture.store.instances.listByAccount(account.id)).map((x) => x.id),
    );
    console.log(
      `${INSTANCES} instances created and linked through 3 nodes in ${fmt((performance.now() - seedStarted) / 1000, 1)} s`,
    );
    // The link's own events (instance.state) are filtered out; let any stragglers settle.
    await sleep(2000);
    const linked = await Promise.all(nodes.map(memory));

    // The load.
    const samples = new Map<Kind, number[]>(MIX.map(([k]) => [k, []]));
    const expected = new Set<string>();
    const total = MIX.reduce((s, [, w]) => s + w, 0);
    const pick = (): Kind => {
      let r = randomInt(total);
      for (const [kind, weight] of MIX) if ((r -= weight) < 0) return kind;
      return MIX[0]![0];
    };
    let flip = false;
    const once = async (kind: Kind) => {
      const node = nodes[randomInt(nodes.length)]!;
      const name = names[randomInt(names.length)]!;
      const contact = `5511${String(80_000_000 + randomInt(1000))}`;
      const started = performance.now();
      let res: { status: number; text: string };
      if (kind === 'settings read') res = await call(node.url, 'GET', `/api/instance/getSettings/${name}`, token);
      else if (kind === 'settings write') {
        res = await call(node.url, 'POST', `/api/instance/settings/${name}`, token, {
          autoReadMessages: (flip = !flip),
        });
      } else if (kind === 'text send') {
        res = await call(node.url, 'POST', `/api/message/text/${name}`, token, { number: contact, text: 'load test' });
      } else {
        res = await call(node.url, 'POST', `/api/sandbox/inbound/${name}`, token, { from: contact, text: 'load test' });
      }
      samples.get(kind)!.push(performance.now() - started);
      if (res.status < 200 || res.status > 299) {
        errors.push(`${kind} via ${node.nodeId}: ${res.status} ${res.text.slice(0, 200)}`);
        return;
      }
      if (kind === 'text send') expected.add((JSON.parse(res.text) as { data: { messageId: string } }).data.messageId);
      if (kind === 'inbound message') expected.add((JSON.parse(res.text) as { messageId: string }).messageId);
    };
    console.log(`load: ${IN_FLIGHT} clients in a closed loop for ${SECONDS} s …`);
    const loadStarted = performance.now();
    const end = loadStarted + SECONDS * 1000;
    await Promise.all(
      Array.from({ length: IN_FLIGHT }, async () => {
        while (performance.now() < end) await once(pick()).catch((err: Error) => errors.push(err.message));
      }),
    );
    const loadSeconds = (performance.now() - loadStarted) / 1000;
    const loaded = await Promise.all(nodes.map(memory));

    // Every message's event must arrive, once.
    const drainStarted = performance.now();
    const missing = () => [...expected].filter((id) => !receiver.events.has(id));
    while (missing().length > 0 && performance.now() - drainStarted < DRAIN_LIMIT_MS) await sleep(100);
    const drainSeconds = (performance.now() - drainStarted) / 1000;
    const lost = missing();
    if (lost.length) errors.push(`${lost.length} message.exchange events never reached the webhook (e.g. ${lost[0]})`);

    const requests = [...samples.values()].reduce((n, s) => n + s.length, 0);
    const rows = MIX.map(([kind]) => {
      const s = summary(samples.get(kind)!);
      return [kind, String(s.n), fmt(s.n / loadSeconds, 0), fmt(s.p50), fmt(s.p90), fmt(s.p99), fmt(s.max)];
    });
    const all = summary([...samples.values()].flat());
    rows.push([
      'all',
      String(all.n),
      fmt(requests / loadSeconds, 0),
      fmt(all.p50),
      fmt(all.p90),
      fmt(all.p99),
      fmt(all.max),
    ]);
    printTable(
      ['call', 'n', 'req/s', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
      rows,
      `Load: ${fmt(loadSeconds, 1)} s, ${IN_FLIGHT} in flight, random node and instance per request`,
    );

    const hooks = summary(receiver.latencies);
    printTable(
      ['webhook events', 'expected', 'received', 'duplicates', 'events/s', 'p50 ms', 'p99 ms', 'drain s'],
      [
        [
          'message.exchange',
          String(expected.size),
          String(receiver.latencies.length),
          String(receiver.duplicates()),
          fmt(receiver.latencies.length / (loadSeconds + drainSeconds), 0),
          fmt(hooks.p50, 0),
          fmt(hooks.p99, 0),
          fmt(drainSeconds, 1),
        ],
      ],
      'Webhook deliveries (emit → receiver)',
    );

    const memRows = nodes.map((n, i) => {
      const [a, b, c] = [idle[i]!, linked[i]!, loaded[i]!];
      return [
        n.nodeId,
        String(c.owned),
        mb(a.rss),
        mb(b.rss),
        mb(c.rss),
        kb(c.owned ? c.rss / c.owned : Number.NaN),
        kb(b.owned ? (b.rss - a.rss) / b.owned : Number.NaN),
        kb(b.owned ? (b.heap - a.heap) / b.owned : Number.NaN),
      ];
    });
    printTable(
      [
        'node',
        'owned',
        'RSS idle MB',
        'RSS linked MB',
        'RSS after load MB',
        'RSS/instance KB',
        'Δ RSS/instance KB',
        'Δ heap/instance KB',
      ],
      memRows,
      'Memory per node after full GC (Δ = linked − idle, i.e. what the instances added)',
    );
    const owned = linked.reduce((n, m) => n + m.owned, 0);
    const perInstance = (linked.reduce((n, m) => n + m.heap, 0) - idle.reduce((n, m) => n + m.heap, 0)) / owned;
    console.log(
      `\nheap per idle instance after GC: ${kb(perInstance)} KB over ${owned} instances ` +
        `(goal ≤ ${GOAL_KB} KB: ${perInstance <= GOAL_KB * 1024 ? 'met' : 'MISSED'})`,
    );

    console.log(`\nerrors: ${errors.length}`);
    for (const e of errors.slice(0, 10)) console.log(`  ${e}`);
    if (errors.length) process.exitCode = 1;
  } finally {
    await fixture.stop();
    await receiver.close();
    agent.destroy();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
