/**
 * Webhook delivery throughput and emit-to-receive latency, through the real path: a sandbox instance's
 * actor emits `message.exchange` events (sandbox inbound messages, called in-process so that HTTP is not
 * what is measured), the dispatcher queues one delivery each, the delivery worker POSTs them to a local
 * receiver. Once with the store outbox (embedded mode), once with Redis Streams (cluster mode, one node).
 * Then WebSocket fan-out: 1,000 clients on one instance, each event's latency to every client.
 *
 *   npx tsx bench/events.ts [events=5000] [clients=1000]
 */
import { createServer } from 'node:http';
import WebSocket from 'ws';
import type { AddressInfo } from 'node:net';
import { startRedisServer } from '../test/helpers/redis-server.js';
import type { TestNode } from '../test/helpers/test-node.js';
import { startTestNode } from '../test/helpers/test-node.js';
import { printTable, summary } from './stats.js';

const EVENTS = Number(process.argv[2] ?? 5000);
const INSTANCES = 8;
const CLIENTS = Number(process.argv[3] ?? 1000);
const FANOUT_EVENTS = 50;

interface Run {
  mode: string;
  n: number;
  seconds: number;
  latencies: number[];
}

async function receiver() {
  const arrivals: { id: string; at: number; emittedAt: number }[] = [];
  const server = createServer((req, res) => {
    let raw = '';
    req.on('data', (c: Buffer) => (raw += c.toString()));
    req.on('end', () => {
      const body = JSON.parse(raw) as { event: string; data: { id: string; timestamp: string } };
      if (body.event === 'message.exchange') {
        arrivals.push({ id: body.data.id, at: Date.now(), emittedAt: Date.parse(body.data.timestamp) });
      }
      res.writeHead(200).end();
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    arrivals,
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () => new Promise<void>((r) => server.close(() => r())),
  };
}

async function run(mode: string, env: Record<string, string>): Promise<Run> {
  const sink = await receiver();
  const node: TestNode = await startTestNode({
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
    ...env,
  });
  try {
    const account = await node.createAccount('bench');
    const ids: string[] = [];
    for (let i = 0; i < INSTANCES; i++) {
      const token = await node.createInstance(account, {
        name: `b${i}`,
        webhookEnabled: true,
        webhookURL: sink.url,
        webhookEvents: ['message.exchange'],
      });
      await node.api.get(`/api/instance/connect/b${i}`, { token });
      await node.api.post(`/api/sandbox/link/b${i}`, {}, { token });
      ids.push(
        (await node.store.instances.listByAccount((await node.store.accounts.findByName('bench'))!.id, [`b${i}`]))[0]!
          .id,
      );
    }
    const started = performance.now();
    let sent = 0;
    // Eight emitters at once, one per instance (each actor runs its calls one at a time).
    await Promise.all(
      ids.map(async (id) => {
        while (sent < EVENTS) {
          sent++;
          await node.runtime.router.call(id, 'sandbox.inbound', {
            from: '5511955550000@s.whatsapp.net',
            text: 'bench',
          });
          // Real events arrive through network I/O; without this yield the emitters (synchronous SQLite
          // plus promise chains) would run as one microtask burst and starve the delivery worker.
          await new Promise((r) => setImmediate(r));
        }
      }),
    );
    const deadline = Date.now() + 120_000;
    while (sink.arrivals.length < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const seconds = (performance.now() - started) / 1000;
    return { mode, n: sink.arrivals.length, seconds, latencies: sink.arrivals.map((a) => a.at - a.emittedAt) };
  } finally {
    await node.stop();
    await sink.close();
  }
}

/** One instance, CLIENTS WebSocket clients, FANOUT_EVENTS events one after another: latency per (event, client). */
async function fanOut(): Promise<{ latencies: number[]; expected: number }> {
  const node = await startTestNode({
    RATE_LIMIT_PER_MINUTE: '1000000',
    RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
    WS_MAX_BUFFERED_BYTES: String(64 * 1024 * 1024),
  });
  const sockets: WebSocket[] = [];
  try {
    const account = await node.createAccount('fanout');
    const token = await node.createInstance(account, {
      name: 'fan',
      websocketEnabled: true,
      websocketEvents: ['message.exchange'],
    });
    await node.api.get('/api/instance/connect/fan', { token });
    await node.api.post('/api/sandbox/link/fan', {}, { token });
    const id = (
      await node.store.instances.listByAccount((await node.store.accounts.findByName('fanout'))!.id, ['fan'])
    )[0]!.id;
    const latencies: number[] = [];
    const wsUrl = `${node.url.replace('http', 'ws')}/ws/fan?token=${encodeURIComponent(token)}`;
    for (let i = 0; i < CLIENTS; i += 100) {
      await Promise.all(
        Array.from({ length: Math.min(100, CLIENTS - i) }, async () => {
          const ws = new WebSocket(wsUrl);
          await new Promise<void>((resolve, reject) => {
            ws.once('open', () => resolve());
            ws.once('error', reject);
          });
          ws.on('message', (raw: Buffer) => {
            const env = JSON.parse(raw.toString()) as { data: { timestamp: string } };
            latencies.push(Date.now() - Date.parse(env.data.timestamp));
          });
          sockets.push(ws);
        }),
      );
    }
    for (let e = 0; e < FANOUT_EVENTS; e++) {
      const before = latencies.length;
      await node.runtime.router.call(id, 'sandbox.inbound', { from: '5511955550001@s.whatsapp.net', text: `fan ${e}` });
      const deadline = Date.now() + 10_000;
      while (latencies.length < before + CLIENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 2));
    }
    return { latencies, expected: CLIENTS * FANOUT_EVENTS };
  } finally {
    for (const ws of sockets) ws.terminate();
    await node.stop();
  }
}

const redis = await startRedisServer();
try {
  const runs = [
    await run('embedded (SQLite outbox)', {}),
    await run('cluster (Redis Streams)', { REDIS_URL: redis.url, ENCRYPTION_KEY: 'e'.repeat(64), HOST: '127.0.0.1' }),
  ];
  console.log(
    `\nWebhook deliveries of ${EVENTS} message.exchange events from ${INSTANCES} instances, one node, 2 cores shared with the receiver\n`,
  );
  printTable(
    ['mode', 'delivered', 'seconds', 'events/s', 'p50 ms', 'p99 ms', 'max ms'],
    runs.map((r) => {
      const s = summary(r.latencies);
      return [
        r.mode,
        String(r.n),
        r.seconds.toFixed(2),
        (r.n / r.seconds).toFixed(0),
        s.p50.toFixed(1),
        s.p99.toFixed(1),
        s.max.toFixed(1),
      ];
    }),
  );
  console.log('\nLatency: from the event timestamp (set when the actor emits) to the receiver reading the POST.');
  console.log('Target (issue): >= 2,000 webhook deliveries/s per node.');
  const fan = await fanOut();
  const f = summary(fan.latencies);
  console.log(`\nWebSocket fan-out: ${FANOUT_EVENTS} events to ${CLIENTS} clients of one instance (one node)\n`);
  printTable(
    ['received', 'expected', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
    [
      [
        String(fan.latencies.length),
        String(fan.expected),
        f.p50.toFixed(1),
        f.p90.toFixed(1),
        f.p99.toFixed(1),
        f.max.toFixed(1),
      ],
    ],
  );
  console.log('Latency: from the event timestamp to the client parsing the frame. Target (issue): p99 <= 50 ms.');
} finally {
  await redis.stop();
}
