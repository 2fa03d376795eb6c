import { expect } from 'chai';
import type { Cluster, Redis } from 'ioredis';
import { pino } from 'pino';
import { LocalLeaseManager, incarnationGraceMs } from '../../src/cluster/lease-manager.js';
import type { LeaseManager } from '../../src/cluster/lease-manager.js';
import { RedisLeaseManager } from '../../src/cluster/redis-lease-manager.js';
import { keys } from '../../src/redis/keys.js';
import { connectCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import type { RedisClusterServer } from '../helpers/redis-cluster.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const log = pino({ level: 'silent' });
const TTL = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two competing nodes over one lease store (in embedded mode, two callers of the same manager). */
interface LeaseFixture {
  pair(ttlMs: number): Promise<{ a: LeaseManager; b: LeaseManager }>;
  /** Deletes a lease behind its holder's back; undefined when the store cannot be reached from outside. */
  lose?: (resource: string) => Promise<void>;
}

let seq = 0;
const resource = (what: string) => `${what}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** The LeaseManager contract, written once for every implementation. */
function leaseContract(name: string, f: LeaseFixture) {
  describe(`${name}: LeaseManager contract`, () => {
    let a: LeaseManager;
    let b: LeaseManager;

    beforeEach(async () => {
      ({ a, b } = await f.pair(TTL));
    });

    it('acquire gives a lease valid in the future, at most one TTL ahead, that nobody can take again', async () => {
      const r = resource('acq');
      const before = performance.now();
      const lease = await a.acquire(r, { fresh: true });
      const after = performance.now();
      expect(lease).to.not.equal(undefined);
      expect(lease!.resource).to.equal(r);
      expect(lease!.token).to.be.a('string').and.not.equal('');
      expect(lease!.validUntil).to.be.greaterThan(after);
      expect(lease!.validUntil).to.be.at.most(before + TTL);
      expect(await b.acquire(r, { fresh: true })).to.equal(undefined);
      expect(await a.acquire(r, { fresh: true })).to.equal(undefined);
    });

    it('holderState: alive while held (with how long it has left), gone once released', async () => {
      const r = resource('state');
      const lease = (await a.acquire(r, { fresh: true }))!;
      const alive = await b.holderState(r, lease.token);
      expect(alive.kind).to.equal('alive');
      expect(alive.kind === 'alive' && alive.expiresInMs).to.be.within(1, TTL);
      expect(await b.holderState(r, 'another-token')).to.not.deep.include({ kind: 'alive' });
      await a.release(lease);
      await until(async () => (await b.holderState(r, lease.token)).kind === 'gone', 'gone', 5000, 50);
    });

    it('renewing every TTL/3 keeps the lease past its first TTL', async () => {
      const r = resource('renew');
      const lease = (await a.acquire(r, { fresh: true }))!;
      const first = lease.validUntil;
      const started = performance.now();
      while (performance.now() - started < TTL * 1.1) {
        await sleep(TTL / 3);
        const outcome = await a.renew(lease);
        expect(outcome.kind, 'renewal').to.equal('renewed');
        if (outcome.kind !== 'renewed') return;
        expect(outcome.reasserted).to.equal(false);
        expect(outcome.validUntil).to.be.greaterThan(lease.validUntil);
        expect(outcome.validUntil).to.be.at.most(performance.now() + TTL);
        lease.validUntil = outcome.validUntil;
      }
      expect(performance.now()).to.be.greaterThan(first);
      expect(lease.validUntil).to.be.greaterThan(performance.now());
      expect(await b.acquire(r, { fresh: true })).to.equal(undefined);
    });

    it('a lease left to expire is lost to its holder and free for the other node', async () => {
      const r = resource('expire');
      const lease = (await a.acquire(r, { fresh: true }))!;
      await sleep(TTL + 100);
      expect(await a.renew(lease)).to.deep.equal({ kind: 'lost' });
      const taken = await b.acquire(r, { fresh: true });
      expect(taken).to.not.equal(undefined);
      // The old holder's token renews nothing, even though the resource is held again.
      expect(await a.renew(lease)).to.deep.equal({ kind: 'lost' });
      expect((await b.renew(taken!)).kind).to.equal('renewed');
    });

    const lose = f.lose;
    if (lose) {
      it('a lease deleted behind its holder is lost at the next renewal', async () => {
        const r = resource('lost');
        const lease = (await a.acquire(r, { fresh: true }))!;
        await lose(r);
        expect(await a.renew(lease)).to.deep.equal({ kind: 'lost' });
      });
    }

    it('release frees the lease for the other node; a stale token releases nothing', async () => {
      const r = resource('release');
      const lease = (await a.acquire(r, { fresh: true }))!;
      await a.release(lease);
      expect(await a.renew(lease)).to.deep.equal({ kind: 'lost' });
      const taken = await b.acquire(r, { fresh: true });
      expect(taken).to.not.equal(undefined);
      await a.release(lease);
      expect((await b.renew(taken!)).kind).to.equal('renewed');
    });
  });
}

describe('lease managers', function () {
  this.timeout(20_000);

  leaseContract('LocalLeaseManager', {
    async pair(ttlMs) {
      const m = new LocalLeaseManager(ttlMs);
      return { a: m, b: m };
    },
  });

  // ---- one Redis ---------------------------------------------------------------------------------
  describe('on one redis-server', () => {
    let server: RedisServer;
    let raw: Redis;
    const clients: Redis[] = [];

    before(async () => {
      server = await startRedisServer();
      raw = await connectRedis(server.url);
    });
    after(async () => {
      for (const c of clients) c.disconnect();
      raw?.disconnect();
      await server?.stop();
    });

    /** Restarts the server empty, and waits until every client has reconnected. */
    const restartEmpty = async () => {
      await server.stop();
      await server.restart({ empty: true });
      for (const c of [raw, ...clients]) {
        await until(async () => (await c.ping().catch(() => '')) === 'PONG', 'reconnected', 5000, 20);
      }
    };

    const manager = async (ttlMs = TTL) => {
      const c = await connectRedis(server.url);
      clients.push(c);
      return new RedisLeaseManager([c], 'node-x', ttlMs, log);
    };

    leaseContract('RedisLeaseManager', {
      async pair(ttlMs) {
        return { a: await manager(ttlMs), b: await manager(ttlMs) };
      },
      async lose(r) {
        await raw.del(keys.lease(r));
      },
    });

    describe('a restarted Redis (it may have forgotten leases whose holders still act)', () => {
      let a: RedisLeaseManager;
      let b: RedisLeaseManager;
      const grace = incarnationGraceMs(TTL);

      beforeEach(async () => {
        a = await manager();
        b = await manager();
        // An incarnation old enough to judge, before each case restarts it.
        await a.holderState(resource('warm'), 'x');
        await sleep(grace);
      });

      it('a missing lease is "unknown" until the new incarnation is older than TTL + margin, then "gone"', async () => {
        const r = resource('restart');
        const lease = (await a.acquire(r))!;
        await restartEmpty();
        const started = performance.now();
        const first = await b.holderState(r, lease.token);
        expect(first.kind).to.equal('unknown');
        expect(first.kind === 'unknown' && first.retryInMs).to.be.within(grace - 500, grace);
        // Before the grace: another node can neither judge the holder gone nor take a free singleton.
        expect(await b.acquire(resource('singleton'))).to.equal(undefined);
        await until(async () => (await b.holderState(r, lease.token)).kind === 'gone', 'gone', 3 * grace, 100);
        expect(performance.now() - started).to.be.greaterThan(grace - 500);
        expect(await b.acquire(resource('singleton'))).to.not.equal(undefined);
      });

      it('a holder still within its validity writes its lease back (reasserted) and keeps it', async () => {
        const r = resource('reassert');
        const lease = (await a.acquire(r))!;
        await restartEmpty();
        const outcome = await a.renew(lease);
        expect(outcome).to.deep.include({ kind: 'renewed', reasserted: true });
        expect(await raw.get(keys.lease(r))).to.equal(lease.token);
        expect((await b.holderState(r, lease.token)).kind).to.equal('alive');
      });

      it('a holder past its validity does not write its lease back', async () => {
        const r = resource('late');
        const lease = (await a.acquire(r))!;
        await restartEmpty();
        lease.validUntil = performance.now() - 1;
        expect(await a.renew(lease)).to.deep.equal({ kind: 'lost' });
        expect(await raw.exists(keys.lease(r))).to.equal(0);
      });

      it('a lease that expired in an old incarnation is gone at once (no wait without a restart)', async () => {
        const r = resource('expired');
        const lease = (await a.acquire(r))!;
        await sleep(TTL + 50);
        expect(await b.holderState(r, lease.token)).to.deep.equal({ kind: 'gone' });
      });

      it('a renewal without an answer (a hung Redis) is undecided, not lost', async () => {
        const c = await connectRedis(server.url, { commandTimeout: 200 });
        clients.push(c);
        const slow = new RedisLeaseManager([c], 'node-x', TTL, log);
        const lease = (await slow.acquire(resource('hung'), { fresh: true }))!;
        server.pause();
        try {
          expect(await slow.renew(lease)).to.deep.equal({ kind: 'undecided' });
        } finally {
          server.resume();
        }
      });
    });
  });

  // ---- a Redis Cluster ----------------------------------------------------------------------------
  describe('on a Redis Cluster (3 masters, 3 replicas)', () => {
    let cluster: RedisClusterServer;
    let raw: Cluster;
    const clients: Cluster[] = [];

    before(async () => {
      cluster = await startRedisCluster();
      raw = await connectCluster(cluster);
    });
    after(async () => {
      for (const c of clients) c.disconnect();
      raw?.disconnect();
      await cluster?.stop();
    });

    const manager = async (ttlMs = TTL) => {
      const c = await connectCluster(cluster);
      clients.push(c);
      return new RedisLeaseManager([c], 'node-x', ttlMs, log);
    };

    leaseContract('RedisLeaseManager', {
      async pair(ttlMs) {
        return { a: await manager(ttlMs), b: await manager(ttlMs) };
      },
      async lose(r) {
        await raw.del(keys.lease(r));
      },
    });

    it('a replica promoted in place of the leases’ master is a new incarnation: a missing lease is "unknown" until it is old enough', async () => {
      const grace = incarnationGraceMs(TTL);
      const a = await manager();
      const b = await manager();
      await a.holderState(resource('warm'), 'x');
      await sleep(grace);
      const r = resource('promoted');
      const lease = (await a.acquire(r))!;
      const master = await cluster.masterOf(keys.incarnation());
      const replica = await cluster.replicaOf(master);
      // A takeover without the old master's consent: what a failover after a crash does.
      await cluster.takeover(replica);
      await until(async () => (await cluster.masterOf(keys.incarnation())) === replica, 'promoted', 10_000, 50);
      // The promoted replica may lack the last writes: here the lease is deleted, as if never replicated.
      await until(async () => (await raw.del(keys.lease(r)).catch(() => -1)) >= 0, 'deleted', 10_000, 50);
      const state = await until(
        async () => (await b.holderState(r, lease.token).catch(() => undefined)) ?? false,
        'answered',
        10_000,
        50,
      );
      expect(state.kind).to.equal('unknown');
      expect(await b.acquire(resource('singleton'))).to.equal(undefined);
      // The holder, still valid, writes its lease back (its client may need a retry to find the new master).
      const valid = { ...lease, validUntil: performance.now() + TTL };
      const outcome = await until(
        async () => {
          const o = await a.renew(valid);
          return o.kind !== 'undecided' && o;
        },
        'a decided renewal',
        TTL / 2,
        50,
      );
      expect(outcome).to.deep.include({ kind: 'renewed', reasserted: true });
      expect((await b.holderState(r, lease.token)).kind).to.equal('alive');
    });
  });

  // ---- three independent masters -----------------------------------------------------------------
  describe('on three redis-servers (quorum 2)', () => {
    const servers: RedisServer[] = [];
    const clients: Redis[] = [];
    let a: RedisLeaseManager;
    let b: RedisLeaseManager;

    before(async () => {
      servers.push(...(await Promise.all([startRedisServer(), startRedisServer(), startRedisServer()])));
      const ca = await Promise.all(servers.map((s) => connectRedis(s.url)));
      const cb = await Promise.all(servers.map((s) => connectRedis(s.url)));
      clients.push(...ca, ...cb);
      a = new RedisLeaseManager(ca, 'node-a', TTL, log);
      b = new RedisLeaseManager(cb, 'node-b', TTL, log);
    });
    after(async () => {
      for (const c of clients) c.disconnect();
      await Promise.all(servers.map((s) => s.stop()));
    });

    it('acquires and renews with one master down; with two down, renewals are undecided, never lost', async () => {
      const r1 = resource('q1');
      const l1 = await a.acquire(r1, { fresh: true });
      expect(l1).to.not.equal(undefined);
      expect(await b.acquire(r1, { fresh: true })).to.equal(undefined);

      await servers[0]!.kill9();
      expect((await a.renew(l1!)).kind).to.equal('renewed');
      const r2 = resource('q2');
      const l2 = await a.acquire(r2, { fresh: true });
      expect(l2, 'acquire with 2 of 3').to.not.equal(undefined);
      expect(await b.acquire(r2, { fresh: true })).to.equal(undefined);
      expect((await b.holderState(r2, l2!.token)).kind).to.equal('alive');

      await servers[1]!.kill9();
      const started = performance.now();
      expect(await a.acquire(resource('q3'), { fresh: true }), 'acquire with 1 of 3').to.equal(undefined);
      // One "yes" and two masters that cannot answer: not renewed, and not known to be lost either.
      expect(await a.renew(l2!), 'renew with 1 of 3').to.deep.equal({ kind: 'undecided' });
      expect((await b.holderState(r2, l2!.token)).kind).to.equal('unknown');
      // A refusal, not a hang: the dead masters fail fast.
      expect(performance.now() - started).to.be.lessThan(TTL);
    });
  });
});
