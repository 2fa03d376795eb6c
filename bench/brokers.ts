/**
 * Event throughput and emit-to-consumer latency to the brokers, through the real path: sandbox instances'
 * actors emit `message.exchange` events (called in-process), the dispatcher queues one delivery each in
 * the durable queue (Redis Streams, one cluster-mode node), the delivery worker publishes them, and a
 * consumer of the broker reads them: a RabbitMQ queue bound to the exchange, a NATS subscription on
 * `switchboard.>`. One broker at a time; each broker is a server of the bench's own.
 *
 *   npx tsx bench/brokers.ts [events=5000]
 */
import { connect as amqpConnect } from 'amqplib';
import { connect as natsConnect } from 'nats';
import { startNatsServer } from '../test/helpers/nats-server.js';
import { startRabbitMq } from '../test/helpers/rabbitmq-server.js';
import { startRedisServer } from '../test/helpers/redis-server.js';
import { startTestNode } from '../test/helpers/test-node.js';
import type { TestNode } from '../test/helpers/test-node.js';
import { printTable, summary } from './stats.js';

const EVENTS = Number(process.argv[2] ?? 5000);
const INSTANCES = 8;

interface Arrival {
  at: number;
  emittedAt: number;
}

const arrival = (raw: Buffer | Uint8Array): Arrival | undefined => {
  const body = JSON.parse(Buffer.from(raw).toString()) as { event: string; data: { timestamp: string } };
  return body.event === 'message.exchange' ? { at: Date.now(), emittedAt: Date.parse(body.data.timestamp) } : undefined;
};

/** Emits EVENTS events from the instances, waits until the consumer saw them all (or 120 s). */
async function burst(node: TestNode, ids: string[], arrivals: Arrival[]) {
  arrivals.length = 0;
  const started = performance.now();
  let sent = 0;
  await Promise.all(
    ids.map(async (id) => {
      while (sent < EVENTS) {
        sent++;
        await node.runtime.router.call(id, 'sandbox.inbound', { from: '5511955550000@s.whatsapp.net', text: 'bench' });
        await new Promise((r) => setImmediate(r));
      }
    }),
  );
  const deadline = Date.now() + 120_000;
  while (arrivals.length < EVENTS && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
  return {
    n: arrivals.length,
    seconds: (performance.now() - started) / 1000,
    latencies: arrivals.map((a) => a.at - a.emittedAt),
  };
}

const redis = await startRedisServer();
const [rabbit, nats] = await Promise.all([startRabbitMq(), startNatsServer()]);
const node = await startTestNode({
  REDIS_URL: redis.url,
  ENCRYPTION_KEY: 'e'.repeat(64),
  HOST: '127.0.0.1',
  RATE_LIMIT_PER_MINUTE: '1000000',
  RATE_LIMIT_CREATE_PER_MINUTE: '1000000',
  AMQP_URL: rabbit.url,
  NATS_URL: nats.url,
});
const rows: string[][] = [];
try {
  const account = await node.createAccount('bench');
  const tokens: string[] = [];
  const ids: string[] = [];
  const accountId = (await node.store.accounts.findByName('bench'))!.id;
  for (let i = 0; i < INSTANCES; i++) {
    const token = await node.createInstance(account, { name: `b${i}` });
    await node.api.get(`/api/instance/connect/b${i}`, { token });
    await node.api.post(`/api/sandbox/link/b${i}`, {}, { token });
    tokens.push(token);
    ids.push((await node.store.instances.listByAccount(accountId, [`b${i}`]))[0]!.id);
  }
  const arrivals: Arrival[] = [];

  const amqp = await amqpConnect(rabbit.url);
  const channel = await amqp.createChannel();
  await channel.assertExchange('switchboard.events', 'topic', { durable: true });
  const { queue } = await channel.assertQueue('bench', { durable: true });
  await channel.bindQueue(queue, 'switchboard.events', '#');
  await channel.consume(
    queue,
    (m) => {
      const a = m && arrival(m.content);
      if (a) arrivals.push(a);
    },
    { noAck: true },
  );

  const nc = await natsConnect({ servers: nats.url });
  nc.subscribe('switchboard.>', {
    callback: (_err, m) => {
      const a = arrival(m.data);
      if (a) arrivals.push(a);
    },
  });

  for (const broker of ['rabbitmq', 'nats'] as const) {
    for (let i = 0; i < INSTANCES; i++) {
      for (const b of ['rabbitmq', 'nats']) {
        await node.api.post(
          `/api/events/${b}/b${i}`,
          { enabled: b === broker, events: ['message.exchange'] },
          { token: tokens[i]! },
        );
      }
    }
    // The actors read the change from their record.
    await new Promise((r) => setTimeout(r, 2500));
    const r = await burst(node, ids, arrivals);
    const s = summary(r.latencies);
    rows.push([
      broker,
      String(r.n),
      r.seconds.toFixed(2),
      (r.n / r.seconds).toFixed(0),
      s.p50.toFixed(1),
      s.p99.toFixed(1),
      s.max.toFixed(1),
    ]);
  }
  await amqp.close();
  await nc.close();
} finally {
  await node.stop();
  await Promise.all([rabbit.destroy(), nats.destroy(), redis.stop()]);
}
console.log(
  `\nBroker deliveries of ${EVENTS} message.exchange events from ${INSTANCES} instances, one cluster-mode node, 2 cores shared with the brokers and consumers\n`,
);
printTable(['broker', 'delivered', 'seconds', 'events/s', 'p50 ms', 'p99 ms', 'max ms'], rows);
console.log('\nLatency: from the event timestamp (set when the actor emits) to the consumer reading the message.');
console.log('Target (issue): >= 5,000 events/s per node to each broker, p99 <= 50 ms.');
