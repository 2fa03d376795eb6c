import { readdirSync } from 'node:fs';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { NodeInfo } from '../../src/cluster/membership.js';
import { RedisMembership } from '../../src/cluster/redis-membership.js';
import { RedisRateLimiter } from '../../src/cluster/redis-rate-limiter.js';
import type { RateLimitResult } from '../../src/cluster/rate-limiter.js';
import { RedisTransport } from '../../src/transport/redis-transport.js';
import { keys } from '../../src/redis/keys.js';
import { runScript } from '../../src/redis/scripts.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const LUA_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../src/redis/lua');

/** A TCP proxy to Redis that delays every reply by `delayMs`. */
async function delayingProxy(redisPort: number, delayMs: number) {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server = createServer((client) => {
    connections++;
    const upstream = connect(redisPort, '127.0.0.1');
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    for (const sock of [client, upstream]) {
      sockets.add(sock);
      sock.on('close', () => sockets.delete(sock));
      sock.on('close', end);
      sock.on('error', end);
    }
    client.on('data', (d) => upstream.write(d));
    upstream.on('data', (d) => setTimeout(() => client.destroyed || client.write(d), delayMs));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    connections: () => connections,
    close: async () => {
      for (const sock of sockets) sock.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

let seq = 0;
const unique = (what: string) => `${what}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

describe('Redis coordination', function () {
  this.timeout(10_000);
  let server: RedisServer;
  const clients: Redis[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  /** A client configured like the service's (no offline queue, one retry). */
  async function client(): Promise<Redis> {
    const c = await connectRedis(server.url);
    clients.push(c);
    return c;
  }

  let admin: Redis | undefined;
  async function adminClient(): Promise<Redis> {
    admin ??= await client();
    return admin;
  }

  /**
   * A RedisTransport over its own client, returned once its subscriber connection (`pub.duplicate()`) is
   * ready: subscribing earlier can lose the subscription (see "keeps a subscription made while its
   * subscriber connection is still handshaking" below), and these cases test the rest of the contract.
   */
  async function transport(): Promise<RedisTransport> {
    const name = unique('transport').replace(/-/g, '_');
    const pub = new Redis(server.url, { maxRetriesPerRequest: 1, connectionName: name });
    pub.on('error', () => undefined);
    clients.push(pub);
    await pub.ping();
    const t = new RedisTransport(pub, log);
    cleanups.push(() => t.close());
    const observer = await adminClient();
    // The subscriber is ready once its ready check (INFO) has been answered.
    for (const started = performance.now(); ; await sleep(2)) {
      const list = (await observer.call('CLIENT', 'LIST')) as string;
      if (list.split('\n').some((l) => l.includes(` name=${name} `) && l.includes(' cmd=info'))) break;
      if (performance.now() - started > 5000) throw new Error('the transport subscriber did not connect');
    }
    await sleep(5);
    return t;
  }

  before(async () => {
    server = await startRedisServer();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  after(async () => {
    admin = undefined;
    for (const c of clients) c.disconnect();
    await server?.stop();
  });

  describe('RedisRateLimiter', () => {
    it('shares one bucket between two nodes', async () => {
      const one = new RedisRateLimiter(await client());
      const two = new RedisRateLimiter(await client());
      const bucket = unique('token');
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await (i % 2 ? two : one).hit(bucket, 5, 60_000));
      expect(results.map((r) => r.allowed)).to.deep.equal([true, true, true, true, true, false]);
      expect(results.map((r) => r.remaining)).to.deep.equal([4, 3, 2, 1, 0, 0]);
      expect(results.every((r) => r.limit === 5)).to.equal(true);
      const nowSec = Date.now() / 1000;
      for (const r of results) {
        expect(r.resetAt).to.be.greaterThan(nowSec);
        expect(r.resetAt).to.be.at.most(Math.ceil(nowSec + 61));
      }
      // Every hit of one window reports the same reset second (within rounding).
      expect(Math.max(...results.map((r) => r.resetAt)) - Math.min(...results.map((r) => r.resetAt))).to.be.at.most(1);
      // Another bucket is untouched.
      expect((await two.hit(unique('other'), 5, 60_000)).remaining).to.equal(4);
      await one.close();
      await two.close();
    });

    it('starts a new window once the old one has passed', async () => {
      const one = new RedisRateLimiter(await client());
      const two = new RedisRateLimiter(await client());
      const bucket = unique('window');
      expect((await one.hit(bucket, 2, 300)).allowed).to.equal(true);
      expect((await two.hit(bucket, 2, 300)).allowed).to.equal(true);
      expect((await one.hit(bucket, 2, 300)).allowed).to.equal(false);
      await sleep(350);
      const fresh = await two.hit(bucket, 2, 300);
      expect(fresh).to.include({ allowed: true, remaining: 1, limit: 2 });
      expect(fresh.resetAt * 1000).to.be.greaterThan(Date.now());
    });
  });

  describe('RedisRateLimiter, batched', () => {
    it('answers far from the limit on its own and adds its counts to Redis in one round per batch', async () => {
      const c = await client();
      const one = new RedisRateLimiter(c, { batchMs: 60_000, nodes: () => 2 });
      const two = new RedisRateLimiter(await client(), { batchMs: 60_000, nodes: () => 2 });
      const bucket = unique('batched');
      const results = [];
      for (let i = 0; i < 40; i++) results.push(await (i % 2 ? two : one).hit(bucket, 1000, 60_000));
      expect(results.every((r) => r.allowed)).to.equal(true);
      // The first request of each node went to Redis; the others wait for the next round.
      expect(Number(await c.get(keys.rate(bucket)))).to.equal(2);
      expect(results.at(-1)!.remaining).to.be.within(1000 - 40, 1000 - 20);
      await one.close();
      await two.close();
      expect(Number(await c.get(keys.rate(bucket)))).to.equal(40);
      // Every answer of the window carries the one reset second Redis gave (within rounding).
      const resets = results.map((r) => r.resetAt);
      expect(Math.max(...resets) - Math.min(...resets)).to.be.at.most(1);
    });

    it('counts every request in Redis near the limit: a burst over two nodes passes it by at most half', async () => {
      const c = await client();
      const one = new RedisRateLimiter(c, { batchMs: 60_000, nodes: () => 2 });
      const two = new RedisRateLimiter(await client(), { batchMs: 60_000, nodes: () => 2 });
      const bucket = unique('near');
      const results = [];
      for (let i = 0; i < 30; i++) results.push(await (i % 2 ? two : one).hit(bucket, 10, 60_000));
      const allowed = results.filter((r) => r.allowed).length;
      expect(allowed).to.be.within(10, 15);
      // Once refused, refused: the requests after the limit are all counted in Redis.
      expect(results.slice(allowed).every((r) => !r.allowed && r.remaining === 0)).to.equal(true);
      await one.close();
      await two.close();
      expect(Number(await c.get(keys.rate(bucket)))).to.equal(30);
    });

    it('keeps the most nodes it saw within the window: a peer missing from its view does not widen its allowance', async () => {
      const c = await client();
      let seen = 3;
      let now = 1_000_000;
      const limiter = new RedisRateLimiter(c, { batchMs: 60_000, nodes: () => seen, now: () => now });
      const bucket = unique('sharers');
      // Limit 12, known 1: with three nodes the allowance is (12 − 1) / 6 → 1 request answered locally.
      await limiter.hit(bucket, 12, 60_000);
      seen = 1;
      expect(limiter.hit(bucket, 12, 60_000)).to.not.be.a('promise');
      expect(limiter.hit(bucket, 12, 60_000), 'answered as if alone').to.be.a('promise');
      await sleep(5);
      // Past a window since three were last seen, one node alone gets the whole half again.
      now += 60_001;
      const other = unique('sharers-later');
      await limiter.hit(other, 12, 60_000);
      for (let i = 0; i < 5; i++) expect(limiter.hit(other, 12, 60_000)).to.not.be.a('promise');
      await limiter.close();
    });

    it('asks Redis again once what it knows is two rounds old, so its answer counts the other nodes', async () => {
      const c = await client();
      let now = 1_000_000;
      const limiter = new RedisRateLimiter(c, { batchMs: 100, nodes: () => 1, now: () => now });
      const bucket = unique('stale');
      expect((await limiter.hit(bucket, 100, 60_000)).remaining).to.equal(99);
      // Other nodes' requests, which this node has not heard of.
      await c.incrby(keys.rate(bucket), 10);
      now += 200;
      const fresh = limiter.hit(bucket, 100, 60_000);
      expect(fresh, 'answered locally while two rounds old').to.not.be.a('promise');
      expect((fresh as RateLimitResult).remaining).to.equal(98);
      now += 201;
      const stale = limiter.hit(bucket, 100, 60_000);
      expect(stale, 'answered locally after a quiet spell').to.be.a('promise');
      // This request, the one still pending and the other nodes' ten.
      expect((await stale).remaining).to.equal(100 - 13);
      await limiter.close();
    });

    it('keeps counts that did not reach Redis for the next round', async () => {
      const c = await client();
      // A clock that stands still: the requests below are answered locally however slowly they run.
      const limiter = new RedisRateLimiter(c, { batchMs: 20, nodes: () => 1, now: () => 1_000_000 });
      const bucket = unique('kept');
      await limiter.hit(bucket, 1000, 60_000);
      // The rounds fail while the counter holds a non-number (INCRBY is refused), then succeed.
      await c.set(keys.rate(bucket), 'x', 'KEEPTTL');
      for (let i = 0; i < 5; i++) await limiter.hit(bucket, 1000, 60_000);
      await sleep(60);
      expect(await c.get(keys.rate(bucket))).to.equal('x');
      await c.set(keys.rate(bucket), '1', 'KEEPTTL');
      const deadline = Date.now() + 2000;
      while (Number(await c.get(keys.rate(bucket))) !== 6 && Date.now() < deadline) await sleep(10);
      expect(Number(await c.get(keys.rate(bucket)))).to.equal(6);
      await limiter.close();
    });
  });

  describe('RedisTransport', () => {
    it('delivers a message published on one node to a subscriber on another', async () => {
      const sender = await transport();
      const receiver = await transport();
      const channel = unique('chan');
      const got: string[] = [];
      await receiver.subscribe(channel, (m) => got.push(m));
      expect(await sender.publish(channel, 'hello')).to.equal(1);
      await until(() => got.length === 1, 'delivery', 2000, 5);
      expect(got).to.deep.equal(['hello']);
    });

    it('publish returns the receiver count: 0 with no subscriber', async () => {
      const sender = await transport();
      const a = await transport();
      const b = await transport();
      const channel = unique('count');
      expect(await sender.publish(channel, 'nobody')).to.equal(0);
      await a.subscribe(channel, () => undefined);
      await b.subscribe(channel, () => undefined);
      expect(await sender.publish(channel, 'two nodes')).to.equal(2);
    });

    it('publishes issued in one turn (sent in one write) arrive in order, each with its receiver count', async () => {
      const sender = await transport();
      const receiver = await transport();
      const channel = unique('batch');
      const nobody = unique('batch-nobody');
      const got: string[] = [];
      await receiver.subscribe(channel, (m) => got.push(m));
      const counts = await Promise.all([
        sender.publish(channel, 'one'),
        sender.publish(nobody, 'lost'),
        sender.publish(channel, 'two'),
        sender.publish(channel, 'three'),
      ]);
      expect(counts).to.deep.equal([1, 0, 1, 1]);
      await until(() => got.length === 3, 'delivery', 2000, 5);
      expect(got).to.deep.equal(['one', 'two', 'three']);
      // The next turn's publishes go out too (the socket was uncorked).
      expect(await sender.publish(channel, 'four')).to.equal(1);
      await until(() => got.length === 4, 'delivery', 2000, 5);
    });

    it('gives every handler of a node the message, even when one throws', async () => {
      const sender = await transport();
      const receiver = await transport();
      const channel = unique('handlers');
      const got: string[] = [];
      await receiver.subscribe(channel, () => {
        throw new Error('handler bug');
      });
      await receiver.subscribe(channel, (m) => got.push(`second:${m}`));
      // One Redis subscription per channel and node: one receiver.
      expect(await sender.publish(channel, 'x')).to.equal(1);
      await until(() => got.length === 1, 'delivery', 2000, 5);
      expect(got).to.deep.equal(['second:x']);
    });

    it('stops delivery after unsubscribe (and only for the handler unsubscribed)', async () => {
      const sender = await transport();
      const receiver = await transport();
      const channel = unique('unsub');
      const first: string[] = [];
      const second: string[] = [];
      const offFirst = await receiver.subscribe(channel, (m) => first.push(m));
      const offSecond = await receiver.subscribe(channel, (m) => second.push(m));
      await offFirst();
      expect(await sender.publish(channel, 'a')).to.equal(1);
      await until(() => second.length === 1, 'delivery', 2000, 5);
      await offSecond();
      expect(await sender.publish(channel, 'b')).to.equal(0);
      await sleep(100);
      expect(first).to.deep.equal([]);
      expect(second).to.deep.equal(['a']);
    });

    it('subscribes over a client configured like ClusterRuntime’s (lazyConnect, no offline queue)', async () => {
      // Regression: ClusterRuntime.create() connects `new Redis(url, { maxRetriesPerRequest: 1,
      // enableOfflineQueue: false, lazyConnect: true })`; a subscriber duplicated with those options was never
      // connected and refused SUBSCRIBE ("Stream isn't writeable and enableOfflineQueue options is false"),
      // so a cluster node could not start.
      const t = new RedisTransport(await client(), log);
      cleanups.push(() => t.close());
      const sender = await transport();
      const channel = unique('prod-options');
      const got: string[] = [];
      await t.subscribe(channel, (m) => got.push(m));
      expect(await sender.publish(channel, 'hi')).to.equal(1);
      await until(() => got.length === 1, 'delivery', 2000, 5);
    });
    it('keeps a subscription made while its subscriber connection is still handshaking', async () => {
      // RedisTransport's subscriber connects at once (lazyConnect: false) and subscribe() sends SUBSCRIBE
      // without waiting for it to be ready. ioredis writes SUBSCRIBE straight away while the connection is
      // in status "connect" (SUBSCRIBE carries the "loading" flag), i.e. before its ready check: the
      // connection enters subscriber mode, the ready check (INFO) is then refused, ioredis drops the
      // connection and reconnects, and the subscription is gone although subscribe() resolved. A proxy that
      // delays Redis' replies by 150 ms holds the handshake open long enough to hit that window every time;
      // with a local Redis the window is a millisecond or two (seen in about 2% of runs under CPU load).
      const proxy = await delayingProxy(server.port, 150);
      cleanups.push(() => proxy.close());
      const pub = new Redis(proxy.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      pub.on('error', () => undefined);
      clients.push(pub);
      await pub.ping(); // connection 1: the publisher
      const t = new RedisTransport(pub, log);
      cleanups.push(() => t.close());
      await until(() => proxy.connections() >= 2, 'the subscriber to connect', 2000, 5);
      await sleep(20); // TCP is up; the handshake replies are still on their way
      const channel = unique('handshake');
      const got: string[] = [];
      await t.subscribe(channel, (m) => got.push(m));
      await sleep(500);
      const direct = await adminClient();
      expect(await direct.publish(channel, 'still there?'), 'receivers 500 ms after subscribe() resolved').to.equal(1);
      await until(() => got.length === 1, 'delivery', 2000, 5);
    });
  });

  describe('RedisTransport unsubscribe', () => {
    it('still delivers a message published before the UNSUBSCRIBE reached Redis', async () => {
      // Through a proxy that delays Redis' replies, the message is on its way when unsubscribe() is called:
      // a routed call published to a node that is stopping must be answered, not lost until its deadline.
      const proxy = await delayingProxy(server.port, 150);
      cleanups.push(() => proxy.close());
      const pub = new Redis(proxy.port, '127.0.0.1', { maxRetriesPerRequest: 1 });
      pub.on('error', () => undefined);
      clients.push(pub);
      await pub.ping();
      const t = new RedisTransport(pub, log);
      cleanups.push(() => t.close());
      const channel = unique('leaving');
      const got: string[] = [];
      const unsubscribe = await t.subscribe(channel, (m) => got.push(m));
      const direct = await adminClient();
      expect(await direct.publish(channel, 'last call')).to.equal(1);
      await unsubscribe();
      expect(got).to.deep.equal(['last call']);
      expect(await direct.publish(channel, 'after')).to.equal(0);
    });
  });

  describe('RedisMembership', () => {
    const ids = (nodes: NodeInfo[]) => nodes.map((n) => n.nodeId);

    async function membership(
      nodeId: string,
      redis?: Redis,
      timing = { heartbeatMs: 100, timeoutMs: 300 },
    ): Promise<RedisMembership> {
      const m = new RedisMembership(
        redis ?? (await client()),
        await transport(),
        { nodeId, url: () => `http://${nodeId}.test`, actors: () => 3, ...timing },
        log,
      );
      cleanups.push(() => m.stop());
      return m;
    }

    // Each case uses its own node ids; leftovers of an earlier case expire within the 300 ms timeout.
    it('two members see each other, sorted by id', async () => {
      const b = await membership('m1-b');
      const a = await membership('m1-a');
      const changes: string[][] = [];
      b.onChange((nodes) => changes.push(ids(nodes)));
      await b.start();
      await a.start();
      expect(ids(a.liveNodes())).to.include.members(['m1-a', 'm1-b']);
      await until(() => ids(b.liveNodes()).includes('m1-a'), 'b to see a', 1000, 5);
      const mine = (nodes: NodeInfo[]) => ids(nodes).filter((id) => id.startsWith('m1-'));
      expect(mine(a.liveNodes())).to.deep.equal(['m1-a', 'm1-b']);
      expect(mine(b.liveNodes())).to.deep.equal(['m1-a', 'm1-b']);
      const sorted = [...ids(b.liveNodes())].sort((x, y) => x.localeCompare(y));
      expect(ids(b.liveNodes())).to.deep.equal(sorted);
      const info = b.liveNodes().find((n) => n.nodeId === 'm1-a')!;
      expect(info).to.include({ url: 'http://m1-a.test', actors: 3 });
      expect(Date.parse(info.heartbeatAt)).to.be.closeTo(Date.now(), 2000);
      expect(changes.some((c) => c.includes('m1-a') && c.includes('m1-b'))).to.equal(true);
      expect(ids(await b.refresh())).to.include.members(['m1-a', 'm1-b']);
    });

    it('a member that stops is gone for the others at once (its leaving message)', async () => {
      const a = await membership('m2-a');
      const b = await membership('m2-b');
      await a.start();
      await b.start();
      await until(() => ids(a.liveNodes()).includes('m2-b'), 'a to see b', 1000, 5);
      await b.stop();
      // Well before a's next heartbeat (100 ms) could have noticed the missing record.
      const dropping = performance.now();
      await until(() => !ids(a.liveNodes()).includes('m2-b'), 'a to drop b', 1000, 5);
      const took = performance.now() - dropping;
      expect(took).to.be.lessThan(60);
      expect(ids(a.liveNodes())).to.include('m2-a');
      await sleep(150);
      expect(ids(a.liveNodes())).to.not.include('m2-b');
    });

    it('a member that falls silent disappears within about timeout + heartbeat', async () => {
      const a = await membership('m3-a');
      const silentRedis = await client();
      const silent = await membership('m3-silent', silentRedis);
      await a.start();
      await silent.start();
      await until(() => ids(a.liveNodes()).includes('m3-silent'), 'a to see the silent node', 1000, 5);
      // Its heartbeats fail from now on (as if the process hung or lost Redis); it never says goodbye.
      silentRedis.disconnect();
      const silencing = performance.now();
      await until(() => !ids(a.liveNodes()).includes('m3-silent'), 'a to drop the silent node', 2000, 5);
      const took = performance.now() - silencing;
      expect(took).to.be.lessThan(300 + 100 + 150);
      expect(ids(a.liveNodes())).to.include('m3-a');
    });
    it('a silent member is dropped when its record expires, not at the next heartbeat', async () => {
      // A heartbeat of 1 s: without a look timed on the record's expiry, the drop comes 0 to 1 s after it.
      const watcher = await client();
      const slow = (nodeId: string, redis?: Redis) => membership(nodeId, redis, { heartbeatMs: 1000, timeoutMs: 1500 });
      const lags: number[] = [];
      for (const round of [1, 2, 3]) {
        const a = await slow(`m4-a${round}`);
        const silentRedis = await client();
        const silent = await slow(`m4-silent${round}`, silentRedis);
        await silent.start();
        await a.start();
        expect(ids(a.liveNodes())).to.include(`m4-silent${round}`);
        // Each round falls silent at another point of a's heartbeat.
        await sleep(round * 300);
        silentRedis.disconnect();
        let expiredAt: number | undefined;
        await until(
          async () => {
            if (expiredAt === undefined && (await watcher.exists(keys.node(`m4-silent${round}`))) === 0) {
              expiredAt = performance.now();
            }
            return !ids(a.liveNodes()).includes(`m4-silent${round}`);
          },
          'a to drop the silent node',
          4000,
          2,
        );
        lags.push(performance.now() - (expiredAt ?? performance.now()));
      }
      // All three within a tenth of the heartbeat of the expiry (a scheduling delay, not a heartbeat's wait).
      expect(Math.max(...lags), `lags ${lags.map((l) => l.toFixed(0)).join(', ')} ms`).to.be.lessThan(100);
    });
  });

  describe('Lua scripts', () => {
    const TESTED = ['forgetOwner', 'hitRateLimit', 'runLease'];

    it('covers every script of src/redis/lua', () => {
      const bases = readdirSync(LUA_DIR)
        .filter((f) => f.endsWith('.lua'))
        .map((f) => f.replace(/-(\d+|var)\.lua$/, ''))
        .sort();
      expect(bases).to.deep.equal(TESTED);
    });

    it('hitRateLimit counts in a window, and repairs a counter left without expiry', async () => {
      const c = await client();
      const k = keys.rate(unique('bucket'));
      const [count1, ttl1] = await runScript<[number, number]>(c, 'hitRateLimit', [k], [1000]);
      const [count2, ttl2] = await runScript<[number, number]>(c, 'hitRateLimit', [k], [1000]);
      expect([count1, count2]).to.deep.equal([1, 2]);
      expect(ttl1).to.be.within(1, 1000);
      expect(ttl2).to.be.within(1, ttl1);
      const stuck = keys.rate(unique('stuck'));
      await c.set(stuck, '7');
      expect(await runScript(c, 'hitRateLimit', [stuck], [5000])).to.deep.equal([8, 5000]);
      expect(await c.pttl(stuck)).to.be.within(1, 5000);
    });

    it('runLease: acquire, renew, state and release, each token-checked', async () => {
      const c = await client();
      const r = unique('res');
      const lease = (op: string, token: string, minAge = 0) =>
        runScript<[number, number, string]>(
          c,
          'runLease',
          [keys.lease(r), keys.incarnation()],
          [op, token, 1000, minAge],
        );
      expect((await lease('acquire', 't1'))[0]).to.equal(1);
      expect((await lease('acquire', 't2'))[0]).to.equal(0);
      expect(await c.get(keys.lease(r))).to.equal('t1');
      const [alive, pttl, run] = await lease('state', 't1');
      expect(alive).to.equal(1);
      expect(pttl).to.be.within(1, 1000);
      expect(run).to.match(/^[0-9a-f]{40}$/);
      expect((await lease('renew', 't2'))[0]).to.equal(-1);
      expect((await lease('renew', 't1'))[0]).to.equal(1);
      expect((await lease('release', 't2'))[0]).to.equal(0);
      expect((await lease('release', 't1'))[0]).to.equal(1);
      expect(await c.exists(keys.lease(r))).to.equal(0);
      // Missing in an incarnation old enough (min age 0 here): expired, not re-asserted.
      expect((await lease('renew', 't1'))[0]).to.equal(0);
      expect((await lease('state', 't1'))[0]).to.equal(0);
      // Too young for the min age: a missing lease is unknown, and its holder may write it back.
      const [young, wait] = await lease('state', 't1', 3_600_000);
      expect(young).to.equal(-2);
      expect(wait).to.be.within(1, 3_600_000);
      expect((await lease('acquire', 't3', 3_600_000))[0]).to.equal(-2);
      expect((await lease('renew', 't1', 3_600_000))[0]).to.equal(2);
      expect(await c.get(keys.lease(r))).to.equal('t1');
      // The incarnation record names this server's run and when it was first seen.
      expect(await c.get(keys.incarnation())).to.match(new RegExp(`^${run}:\\d+$`));
      const refused = await lease('bogus', 't1').then(
        () => 'no error',
        (err: Error) => err.message,
      );
      expect(refused).to.match(/unknown lease operation/);
    });

    it('forgetOwner deletes an owner hint only while it names the node', async () => {
      const c = await client();
      const id = unique('inst');
      await c.set(keys.owner(id), 'node-a');
      expect(await runScript(c, 'forgetOwner', [keys.owner(id)], ['node-b'])).to.equal(0);
      expect(await c.get(keys.owner(id))).to.equal('node-a');
      expect(await runScript(c, 'forgetOwner', [keys.owner(id)], ['node-a'])).to.equal(1);
      expect(await c.exists(keys.owner(id))).to.equal(0);
    });

    it('refuses a fixed-key script called with the wrong number of keys, and an unknown script', async () => {
      const c = await client();
      const outcome = async (f: () => Promise<unknown>) => {
        try {
          await f();
        } catch (err) {
          return (err as Error).message;
        }
        return 'no error';
      };
      expect(await outcome(() => runScript(c, 'hitRateLimit', ['a', 'b'], [1000]))).to.match(/takes 1 keys, got 2/);
      expect(await outcome(() => runScript(c, 'runLease', ['only-one'], ['state', 't', 1000, 0]))).to.match(
        /takes 2 keys, got 1/,
      );
      expect(await outcome(() => runScript(c, 'noSuchScript', [], []))).to.match(/No Lua script named noSuchScript/);
      expect(await c.exists('a', 'b', 'only-one')).to.equal(0);
    });
  });
});
