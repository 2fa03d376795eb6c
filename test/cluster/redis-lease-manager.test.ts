import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { LocalLeaseManager } from '../../src/cluster/lease-manager.js';
import type { Lease, LeaseManager } from '../../src/cluster/lease-manager.js';
import { RedisLeaseManager } from '../../src/cluster/redis-lease-manager.js';
import { keys } from '../../src/redis/keys.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

const log = pino({ level: 'silent' });
const TTL = 1000;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Two competing nodes over one lease store. */
interface LeasePair {
  /** The node under test. */
  a: LeaseManager;
  aId: string;
  /** Another node competing for the same resources (the embedded manager: the same one). */
  b: LeaseManager;
  bId: string;
}

interface LeaseFixture {
  pair(ttlMs: number): Promise<LeasePair>;
  /** Deletes a lease behind its holder's back; undefined when the store cannot be reached from outside. */
  lose?: (resource: string) => Promise<void>;
}

let seq = 0;
const resource = (what: string) => `${what}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/** The LeaseManager contract, written once for every implementation. */
function leaseContract(name: string, f: LeaseFixture) {
  describe(`${name}: LeaseManager contract`, () => {
    let p: LeasePair;

    beforeEach(async () => {
      p = await f.pair(TTL);
    });

    it('acquire gives a lease valid in the future, at most one TTL ahead, and owners() names the node', async () => {
      const r = resource('acq');
      const before = performance.now();
      const lease = await p.a.acquire(r);
      const after = performance.now();
      expect(lease).to.not.equal(undefined);
      expect(lease!.resource).to.equal(r);
      expect(lease!.token).to.be.a('string').and.not.equal('');
      expect(lease!.validUntil).to.be.greaterThan(after);
      expect(lease!.validUntil).to.be.at.most(performance.now() + p.a.ttlMs);
      expect(lease!.validUntil).to.be.at.most(before + p.a.ttlMs);
      expect(await p.a.owners([r, resource('nobody')])).to.deep.equal([p.aId, undefined]);
      expect(await p.b.owners([r])).to.deep.equal([p.aId]);
      expect(await p.a.owners([])).to.deep.equal([]);
    });

    it('expiresIn tells every node how long a held lease has left, and nothing for a free one', async () => {
      const r = resource('ttl');
      await p.a.acquire(r);
      const [left, free] = await p.b.expiresIn([r, resource('free')]);
      expect(left).to.be.a('number').greaterThan(0).and.at.most(p.a.ttlMs);
      expect(free).to.equal(undefined);
      expect(await p.a.expiresIn([])).to.deep.equal([]);
    });

    it('a held lease cannot be acquired again, by another node or by its holder', async () => {
      const r = resource('held');
      const lease = await p.a.acquire(r);
      expect(lease).to.not.equal(undefined);
      expect(await p.b.acquire(r)).to.equal(undefined);
      expect(await p.a.acquire(r)).to.equal(undefined);
      expect(await p.a.owners([r])).to.deep.equal([p.aId]);
    });

    it('renewing every TTL/3 keeps the lease past its first TTL', async () => {
      const r = resource('renew');
      let lease = (await p.a.acquire(r))!;
      const first = lease.validUntil;
      const started = performance.now();
      while (performance.now() - started < TTL * 1.1) {
        await sleep(TTL / 3);
        const { renewed } = await p.a.renew([lease]);
        expect(renewed, 'renewal').to.have.length(1);
        expect(renewed[0]!.token).to.equal(lease.token);
        expect(renewed[0]!.resource).to.equal(r);
        expect(renewed[0]!.validUntil).to.be.greaterThan(lease.validUntil);
        expect(renewed[0]!.validUntil).to.be.at.most(performance.now() + p.a.ttlMs);
        lease = renewed[0]!;
      }
      // Past the TTL of the first acquisition, and still ours.
      expect(performance.now()).to.be.greaterThan(first);
      expect(lease.validUntil).to.be.greaterThan(performance.now());
      expect(await p.b.acquire(r)).to.equal(undefined);
      expect(await p.a.owners([r])).to.deep.equal([p.aId]);
    });

    it('a lease left to expire is absent from renew() and free for the other node', async () => {
      const r = resource('expire');
      const kept = resource('kept');
      const lease = (await p.a.acquire(r))!;
      const other = (await p.a.acquire(kept))!;
      await sleep(TTL / 2);
      const [keptLease] = (await p.a.renew([other])).renewed;
      await sleep(TTL / 2 + 100);
      // `r` has expired; `kept` was renewed half-way and is still held.
      const { renewed, lost } = await p.a.renew([lease, keptLease!]);
      expect(renewed.map((l) => l.resource)).to.deep.equal([kept]);
      expect(lost.map((l) => l.resource)).to.deep.equal([r]);
      expect(await p.a.owners([r])).to.deep.equal([undefined]);
      const taken = await p.b.acquire(r);
      expect(taken).to.not.equal(undefined);
      expect(await p.a.owners([r])).to.deep.equal([p.bId]);
      // The old holder's token renews nothing, even though the resource is held again.
      expect(await p.a.renew([lease])).to.deep.equal({ renewed: [], lost: [lease] });
      expect((await p.b.renew([taken!])).renewed).to.have.length(1);
    });

    const lose = f.lose;
    if (lose) {
      it('a lease deleted behind its holder is absent from renew()', async () => {
        const r = resource('lost');
        const kept = resource('kept');
        const lease = (await p.a.acquire(r))!;
        const other = (await p.a.acquire(kept))!;
        await lose(r);
        const { renewed, lost } = await p.a.renew([lease, other]);
        expect(renewed.map((l) => l.resource)).to.deep.equal([kept]);
        expect(lost.map((l) => l.resource)).to.deep.equal([r]);
        expect(await p.a.owners([r, kept])).to.deep.equal([undefined, p.aId]);
      });
    }

    it('release frees the lease for the other node and clears owners()', async () => {
      const r = resource('release');
      const lease = (await p.a.acquire(r))!;
      await p.a.release([lease]);
      expect(await p.a.owners([r])).to.deep.equal([undefined]);
      expect(await p.a.renew([lease])).to.deep.equal({ renewed: [], lost: [lease] });
      const taken = await p.b.acquire(r);
      expect(taken).to.not.equal(undefined);
      expect(await p.a.owners([r])).to.deep.equal([p.bId]);
      // Releasing the stale lease again is token-checked: the new holder keeps it.
      await p.a.release([lease]);
      expect(await p.a.owners([r])).to.deep.equal([p.bId]);
      expect((await p.b.renew([taken!])).renewed).to.have.length(1);
      await p.a.release([]);
    });
  });
}

describe('lease managers', function () {
  this.timeout(10_000);

  // ---- the embedded implementation -------------------------------------------------------------
  const locals: LeaseManager[] = [];
  after(async () => {
    for (const l of locals) await l.close();
  });
  leaseContract('LocalLeaseManager', {
    async pair(ttlMs) {
      // One process, one map: the "other node" is another caller of the same manager.
      const m = new LocalLeaseManager('node-a', ttlMs);
      locals.push(m);
      return { a: m, aId: 'node-a', b: m, bId: 'node-a' };
    },
  });

  // ---- one Redis ---------------------------------------------------------------------------------
  describe('on one redis-server', () => {
    let server: RedisServer;
    let raw: Redis;
    const clients: Redis[] = [];
    const managers: LeaseManager[] = [];

    before(async () => {
      server = await startRedisServer();
      raw = await connectRedis(server.url);
    });
    after(async () => {
      for (const m of managers) await m.close();
      for (const c of clients) c.disconnect();
      raw?.disconnect();
      await server?.stop();
    });

    leaseContract('RedisLeaseManager', {
      async pair(ttlMs) {
        const ca = await connectRedis(server.url);
        const cb = await connectRedis(server.url);
        clients.push(ca, cb);
        const a = new RedisLeaseManager([ca], 'node-a', ttlMs, log);
        const b = new RedisLeaseManager([cb], 'node-b', ttlMs, log);
        managers.push(a, b);
        return { a, aId: 'node-a', b, bId: 'node-b' };
      },
      async lose(r) {
        await raw.del(keys.lease(r), keys.owner(r));
      },
    });

    it('renews 1,200 leases in one call (several batches), each kept only while held', async () => {
      const c = await connectRedis(server.url);
      clients.push(c);
      // A TTL long enough that acquiring 1,200 leases on a loaded machine loses none before the renewal.
      const ttl = 10 * TTL;
      const m = new RedisLeaseManager([c], 'node-batch', ttl, log);
      managers.push(m);
      const prefix = resource('batch');
      const leases: Lease[] = [];
      for (let i = 0; i < 1200; i += 100) {
        const chunk = await Promise.all(Array.from({ length: 100 }, (_, j) => m.acquire(`${prefix}-${i + j}`)));
        for (const l of chunk) {
          expect(l).to.not.equal(undefined);
          leases.push(l!);
        }
      }
      // Lose one lease in the second batch and one in the third: the others must still map back correctly.
      await raw.del(keys.lease(`${prefix}-700`), keys.lease(`${prefix}-1100`));
      await sleep(300);
      const before = performance.now();
      const { renewed, lost } = await m.renew(leases);
      expect(renewed).to.have.length(1198);
      expect(lost.map((l) => l.resource)).to.deep.equal([`${prefix}-700`, `${prefix}-1100`]);
      const renewedIds = new Set(renewed.map((l) => l.resource));
      expect(renewedIds.has(`${prefix}-700`)).to.equal(false);
      expect(renewedIds.has(`${prefix}-1100`)).to.equal(false);
      for (const l of renewed) {
        const original = leases.find((o) => o.resource === l.resource)!;
        expect(l.token).to.equal(original.token);
        expect(l.validUntil).to.be.greaterThan(before);
      }
      // Redis agrees: leases of every batch have a fresh TTL and an owner key. Without the renewal a
      // lease would have lost the 300 ms slept above; what elapsed since the renewal is allowed for.
      for (const i of [0, 499, 500, 999, 1000, 1199]) {
        const pttl = await raw.pttl(keys.lease(`${prefix}-${i}`));
        expect(pttl, `lease ${i}`).to.be.greaterThan(ttl - (performance.now() - before) - 100);
        expect(await raw.get(keys.owner(`${prefix}-${i}`))).to.equal('node-batch');
      }
      await m.release(renewed);
      expect(await raw.exists(keys.lease(`${prefix}-0`), keys.lease(`${prefix}-1199`))).to.equal(0);
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
      await a?.close();
      await b?.close();
      for (const c of clients) c.disconnect();
      await Promise.all(servers.map((s) => s.stop()));
    });

    it('acquires and renews with one master down, and fails with two down', async () => {
      const r1 = resource('q1');
      const l1 = await a.acquire(r1);
      expect(l1).to.not.equal(undefined);
      expect(await b.acquire(r1)).to.equal(undefined);

      await servers[0]!.kill9();
      const { renewed } = await a.renew([l1!]);
      expect(renewed).to.have.length(1);
      const r2 = resource('q2');
      const l2 = await a.acquire(r2);
      expect(l2, 'acquire with 2 of 3').to.not.equal(undefined);
      expect(await b.acquire(r2)).to.equal(undefined);
      // The first master is down: owners() falls back to the next one.
      expect(await b.owners([r1, r2])).to.deep.equal(['node-a', 'node-a']);

      await servers[1]!.kill9();
      const started = performance.now();
      expect(await a.acquire(resource('q3')), 'acquire with 1 of 3').to.equal(undefined);
      // One "yes" and two masters that cannot answer: not renewed, and not known to be lost either. The
      // holder keeps its current validity and tries again; only definite refusals lose a lease.
      expect(await a.renew([renewed[0]!, l2!]), 'renew with 1 of 3').to.deep.equal({ renewed: [], lost: [] });
      // A refusal, not a hang: the dead masters fail fast.
      expect(performance.now() - started).to.be.lessThan(TTL);
    });
  });
});
