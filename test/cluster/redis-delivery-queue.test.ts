import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { testDelivery } from '../helpers/deliveries.js';
import { RedisDeliveryQueue } from '../../src/events/webhooks/redis-delivery-queue.js';
import { keys } from '../../src/redis/keys.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

const log = pino({ level: 'silent' });

const delivery = (n: number, instanceId = 'inst-1') => testDelivery(n, instanceId);

/** The Redis Streams queue and its scripts (ackDeliveries, retryDelivery, buryDelivery, promoteDue, reviveDead). */
describe('RedisDeliveryQueue (real Redis)', () => {
  let redis: RedisServer;
  let a: Redis;
  let b: Redis;

  before(async () => {
    redis = await startRedisServer();
    a = await connectRedis(redis.url);
    b = await connectRedis(redis.url);
  });

  beforeEach(async () => {
    await a.flushall();
  });

  after(async () => {
    a.disconnect();
    b.disconnect();
    await redis.stop();
  });

  it('hands each delivery to one node, and completing it (ackDeliveries) removes it', async () => {
    const q1 = new RedisDeliveryQueue(a, 'node-1', log);
    const q2 = new RedisDeliveryQueue(b, 'node-2', log);
    await q1.enqueue([delivery(1), delivery(2), delivery(3)]);
    const first = await q1.take(2, 10_000);
    const second = await q2.take(10, 10_000);
    expect(first.map((d) => d.id)).to.deep.equal(['d-1', 'd-2']);
    expect(second.map((d) => d.id)).to.deep.equal(['d-3']);
    expect(first[0]!.receipt).to.be.a('string');
    for (const d of [...first, ...second]) await (d === second[0] ? q2 : q1).complete(d);
    expect(await a.xlen(keys.webhookStream())).to.equal(0);
    expect(await q1.depth()).to.equal(0);
  });

  it('sends the enqueues of one turn as one pipeline and acknowledges its completions with one XACK', async () => {
    const q = new RedisDeliveryQueue(a, 'node-1', log);
    const pipeline = a.pipeline.bind(a);
    let pipelines = 0;
    a.pipeline = (...args: Parameters<Redis['pipeline']>) => (pipelines++, pipeline(...args));
    try {
      await Promise.all(Array.from({ length: 100 }, (_, i) => q.enqueue([delivery(i)])));
    } finally {
      a.pipeline = pipeline;
    }
    expect(pipelines).to.equal(1);
    const taken = await q.take(100, 10_000);
    expect(new Set(taken.map((d) => d.id)).size).to.equal(100);
    await a.config('RESETSTAT');
    await Promise.all(taken.map((d) => q.complete(d)));
    const stats = await a.info('commandstats');
    expect(/cmdstat_xack:calls=(\d+)/.exec(stats)?.[1]).to.equal('1');
    expect(await a.xlen(keys.webhookStream())).to.equal(0);
    expect(await q.take(10, 10_000)).to.deep.equal([]);
  });

  it("reclaims a dead node's taken deliveries after the lease", async () => {
    const dead = new RedisDeliveryQueue(a, 'dead-node', log);
    const alive = new RedisDeliveryQueue(b, 'alive-node', log);
    await dead.enqueue([delivery(1)]);
    expect(await dead.take(10, 200)).to.have.length(1);
    expect(await alive.take(10, 200)).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 250));
    const reclaimed = await alive.take(10, 200);
    expect(reclaimed.map((d) => d.id)).to.deep.equal(['d-1']);
    await alive.complete(reclaimed[0]!);
    expect(await a.xlen(keys.webhookStream())).to.equal(0);
  });

  it('retryDelivery parks a delivery until due, then promoteDue brings it back with its attempts', async () => {
    const q = new RedisDeliveryQueue(a, 'node-1', log);
    await q.enqueue([delivery(1)]);
    const [d] = await q.take(10, 10_000);
    await q.retry({ ...d!, attempts: 1, lastError: 'HTTP 503' }, Date.now() + 150);
    expect(await a.xlen(keys.webhookStream())).to.equal(0);
    expect(await a.zcard(keys.webhookRetries())).to.equal(1);
    expect(await q.take(10, 10_000)).to.deep.equal([]);
    await new Promise((r) => setTimeout(r, 200));
    const [again] = await q.take(10, 10_000);
    expect(again).to.deep.include({ id: 'd-1', attempts: 1, lastError: 'HTTP 503' });
    expect(await a.zcard(keys.webhookRetries())).to.equal(0);
  });

  it('buryDelivery keeps dead letters per instance; reviveDead queues all or some again with fresh attempts', async () => {
    const q = new RedisDeliveryQueue(a, 'node-1', log);
    await q.enqueue([delivery(1), delivery(2), delivery(3, 'inst-2')]);
    for (const d of await q.take(10, 10_000)) await q.bury({ ...d, attempts: 3, lastError: 'HTTP 400' });
    expect(await a.xlen(keys.webhookStream())).to.equal(0);
    const letters = await q.deadLetters('inst-1');
    expect(letters.map((l) => [l.id, l.attempts, l.lastError])).to.deep.equal([
      ['d-1', 3, 'HTTP 400'],
      ['d-2', 3, 'HTTP 400'],
    ]);
    expect(letters[0]!.failedAt).to.be.a('string');
    expect(letters[0]!).not.to.have.property('receipt');
    expect(await q.redeliver('inst-1', ['d-2'])).to.equal(1);
    expect((await q.deadLetters('inst-1')).map((l) => l.id)).to.deep.equal(['d-1']);
    expect(await q.redeliver('inst-1')).to.equal(1);
    expect(await q.deadLetters('inst-1')).to.deep.equal([]);
    const revived = await q.take(10, 10_000);
    expect(revived.map((d) => [d.id, d.attempts])).to.deep.equal([
      ['d-2', 0],
      ['d-1', 0],
    ]);
    expect((await q.deadLetters('inst-2')).map((l) => l.id)).to.deep.equal(['d-3']);
  });

  it('recreates its consumer group after a Redis restart without persistence', async () => {
    const q = new RedisDeliveryQueue(a, 'node-1', log);
    await q.take(1, 1000);
    await a.flushall();
    await q.enqueue([delivery(9)]);
    expect((await q.take(10, 1000)).map((d) => d.id)).to.deep.equal(['d-9']);
  });
});
