import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { incarnationGraceMs } from '../../src/cluster/lease-manager.js';
import type { HolderState, Lease, RenewOutcome, LeaseManager } from '../../src/cluster/lease-manager.js';
import { RedisLeaseManager } from '../../src/cluster/redis-lease-manager.js';
import { ClusterSingleton } from '../../src/cluster/singleton.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

const log = pino({ level: 'silent' });
const TTL = 600;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Delegates to a lease manager, remembering how long the last lease it handed out is valid. */
class RecordingLeases implements LeaseManager {
  /** validUntil of the last lease acquired or renewed (monotonic ms). */
  lastValidUntil = 0;
  /** While set, acquire() waits for it before asking Redis. */
  acquireGate: Promise<void> | undefined;
  acquiring = 0;

  constructor(private readonly inner: LeaseManager) {}

  get ttlMs(): number {
    return this.inner.ttlMs;
  }

  async acquire(resource: string, options?: { fresh?: boolean }): Promise<Lease | undefined> {
    this.acquiring++;
    try {
      if (this.acquireGate) await this.acquireGate;
      const lease = await this.inner.acquire(resource, options);
      if (lease) this.lastValidUntil = lease.validUntil;
      return lease;
    } finally {
      this.acquiring--;
    }
  }

  async renew(lease: Lease): Promise<RenewOutcome> {
    const outcome = await this.inner.renew(lease);
    if (outcome.kind === 'renewed') this.lastValidUntil = Math.max(this.lastValidUntil, outcome.validUntil);
    return outcome;
  }

  release(lease: Lease): Promise<void> {
    return this.inner.release(lease);
  }

  holderState(resource: string, token: string): Promise<HolderState> {
    return this.inner.holderState(resource, token);
  }

  close(): Promise<void> {
    return this.inner.close();
  }
}

/** The role as the three nodes run it: who runs it now, and the most that ever ran it at once. */
class RoleLog {
  running = new Set<string>();
  starts = 0;
  stops = 0;
  maxConcurrent = 0;
  readonly events: { node: string; what: 'start' | 'stop'; at: number }[] = [];

  role(node: string) {
    return {
      start: () => {
        this.starts++;
        this.running.add(node);
        this.maxConcurrent = Math.max(this.maxConcurrent, this.running.size);
        this.events.push({ node, what: 'start', at: performance.now() });
      },
      stop: () => {
        this.stops++;
        this.running.delete(node);
        this.events.push({ node, what: 'stop', at: performance.now() });
      },
    };
  }

  get count(): number {
    return this.starts - this.stops;
  }

  holder(): string | undefined {
    return [...this.running][0];
  }

  async waitFor(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
    const started = performance.now();
    while (!check()) {
      if (performance.now() - started > timeoutMs) {
        throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
      }
      await sleep(10);
    }
    return performance.now() - started;
  }
}

let roleSeq = 0;

describe('ClusterSingleton over Redis', function () {
  this.timeout(15_000);
  let server: RedisServer;
  let clients: Redis[] = [];
  let singletons: ClusterSingleton[] = [];
  let managers: LeaseManager[] = [];

  /** A Redis incarnation old enough that a free lease is taken at once (a new one makes everyone wait). */
  async function warm(): Promise<void> {
    const client = await connectRedis(server.url);
    await new RedisLeaseManager([client], 'node-x', TTL, log).holderState('warm', 'x');
    client.disconnect();
    await sleep(incarnationGraceMs(TTL));
  }

  before(async () => {
    server = await startRedisServer();
    await warm();
  });
  afterEach(async () => {
    for (const s of singletons) await s.stop();
    for (const m of managers) await m.close();
    for (const c of clients) c.disconnect();
    singletons = [];
    managers = [];
    clients = [];
  });
  after(async () => {
    await server?.stop();
  });

  /** Three nodes competing for one role, each with its own client and lease manager. */
  async function cluster(nodes = ['s1', 's2', 's3']) {
    const name = `role-${++roleSeq}`;
    const roles = new RoleLog();
    const leases = new Map<string, RecordingLeases>();
    const byNode = new Map<string, ClusterSingleton>();
    for (const node of nodes) {
      const client = await connectRedis(server.url);
      clients.push(client);
      const recording = new RecordingLeases(new RedisLeaseManager([client], 'node-x', TTL, log));
      managers.push(recording);
      leases.set(node, recording);
      const singleton = new ClusterSingleton(name, recording, roles.role(node), log);
      singletons.push(singleton);
      byNode.set(node, singleton);
    }
    return { name, roles, leases, byNode };
  }

  it('runs the role on exactly one node at a time', async () => {
    const { roles, byNode } = await cluster();
    for (const s of byNode.values()) s.start();
    await roles.waitFor('a holder', () => roles.count === 1, TTL);
    const samples: number[] = [];
    const started = performance.now();
    while (performance.now() - started < 2000) {
      samples.push(roles.count);
      expect([...byNode.values()].filter((s) => s.holding).length, 'nodes holding').to.be.at.most(1);
      await sleep(50);
    }
    expect(Math.max(...samples)).to.equal(1);
    expect(
      samples.every((c) => c === 1),
      'the holder keeps the role while it renews',
    ).to.equal(true);
    expect(roles.maxConcurrent).to.equal(1);
    expect(roles.starts).to.equal(1);
    expect(byNode.get(roles.holder()!)!.holding).to.equal(true);
  });

  it('hands the role to another node within about a TTL when the holder stops', async () => {
    const { roles, byNode } = await cluster();
    for (const s of byNode.values()) s.start();
    await roles.waitFor('a holder', () => roles.count === 1, TTL);
    const first = roles.holder()!;
    const stoppedAt = performance.now();
    await byNode.get(first)!.stop();
    expect(roles.running.has(first)).to.equal(false);
    const took = await roles.waitFor('a new holder', () => roles.count === 1, TTL + 300);
    const second = roles.holder()!;
    expect(second).to.not.equal(first);
    expect(performance.now() - stoppedAt).to.be.lessThan(TTL + 300);
    expect(took).to.be.lessThan(TTL + 300);
    await sleep(300);
    expect(roles.maxConcurrent).to.equal(1);
    expect(roles.holder()).to.equal(second);
  });

  it('stops the role before the lease can expire when Redis dies, and elects again after a restart', async () => {
    const { roles, byNode, leases } = await cluster();
    for (const s of byNode.values()) s.start();
    await roles.waitFor('a holder', () => roles.count === 1, TTL);
    await sleep(TTL / 2); // let it renew at least once
    const holder = roles.holder()!;
    await server.kill9();
    // What the role's side effects check: `holding` is false from the lease's validity on, whatever the
    // timers' delays on a busy machine.
    const watched = byNode.get(holder)!;
    let heldTooLong = false;
    const watch = setInterval(() => {
      if (performance.now() >= leases.get(holder)!.lastValidUntil && watched.holding) heldTooLong = true;
    }, 5);
    try {
      await roles.waitFor('the holder to stop', () => roles.count === 0, TTL + 1000);
    } finally {
      clearInterval(watch);
    }
    expect(heldTooLong, 'holding past the lease validity').to.equal(false);
    expect(watched.holding).to.equal(false);
    // Nobody can win the role while Redis is down.
    await sleep(TTL);
    expect(roles.count).to.equal(0);

    await server.restart();
    const restartedAt = performance.now();
    await roles.waitFor('a holder after the restart', () => roles.count === 1, 6000);
    await sleep(TTL);
    expect(roles.count).to.equal(1);
    expect(roles.maxConcurrent).to.equal(1);
    expect(performance.now() - restartedAt).to.be.lessThan(8000);
  });

  it('a Redis restarted empty under a running holder gives nobody a second copy of the role', async () => {
    await warm();
    const { roles, byNode } = await cluster();
    for (const s of byNode.values()) s.start();
    await roles.waitFor('a holder', () => roles.count === 1, TTL);
    const holder = roles.holder()!;
    // The lease is gone with the data; the holder's own validity is not. Without the incarnation guard
    // another node takes the empty lease at once while the holder still runs the role.
    await server.stop();
    await server.restart({ empty: true });
    const started = performance.now();
    while (performance.now() - started < 2 * incarnationGraceMs(TTL)) {
      expect(roles.count, 'copies of the role').to.be.at.most(1);
      await sleep(20);
    }
    expect(roles.maxConcurrent).to.equal(1);
    expect(roles.count).to.equal(1);
    // The holder wrote its lease back within its validity and kept the role.
    expect(roles.holder()).to.equal(holder);
  });

  it('does not start the role after stop() when an acquire was still in flight', async () => {
    // stop() only clears the timer and releases a lease already held. A tick whose acquire() is still
    // pending finishes after stop(): it stores the lease and starts the role on a stopped singleton, whose
    // timer is gone, so the lease is never renewed and the role never stopped. Once the lease expires
    // another node takes the role too.
    const { roles, byNode, leases } = await cluster(['late', 'other']);
    const late = byNode.get('late')!;
    let open!: () => void;
    leases.get('late')!.acquireGate = new Promise<void>((r) => (open = r));
    late.start();
    await roles.waitFor('the first acquire to be pending', () => leases.get('late')!.acquiring === 1, 1000);
    const stopping = late.stop();
    open();
    await stopping;
    await sleep(100);
    const startedAfterStop = roles.running.has('late');
    byNode.get('other')!.start();
    await sleep(TTL + 400);
    expect({ startedAfterStop, maxConcurrent: roles.maxConcurrent }).to.deep.equal({
      startedAfterStop: false,
      maxConcurrent: 1,
    });
  });
});
