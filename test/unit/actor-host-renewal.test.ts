import { expect } from 'chai';
import { pino } from 'pino';
import { ActorHost } from '../../src/cluster/actor-host.js';
import { LocalLeaseManager } from '../../src/cluster/lease-manager.js';
import type { Lease, LeaseManager, RenewOutcome } from '../../src/cluster/lease-manager.js';
import type { StopReason } from '../../src/actors/instance-actor.js';
import type { Store } from '../../src/store/store.js';

const log = pino({ level: 'silent' });
const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/** Leases of one process whose renewals can be made undecided (Redis unreachable) or refused. */
class FlakyLeases implements LeaseManager {
  readonly inner: LocalLeaseManager;
  /** While true, renew() learns nothing (every master failed). */
  unreachable = false;
  renewals = 0;

  constructor(readonly ttlMs: number) {
    this.inner = new LocalLeaseManager('node-a', ttlMs);
  }
  acquire(resource: string) {
    return this.inner.acquire(resource);
  }
  async renew(leases: Lease[]): Promise<RenewOutcome> {
    this.renewals++;
    if (this.unreachable) return { renewed: [], lost: [] };
    return this.inner.renew(leases);
  }
  release(leases: Lease[]) {
    return this.inner.release(leases);
  }
  owners(resources: string[]) {
    return this.inner.owners(resources);
  }
  expiresIn(resources: string[]) {
    return this.inner.expiresIn(resources);
  }
  close() {
    return this.inner.close();
  }
}

function host(leases: LeaseManager, stops: StopReason[]): ActorHost {
  let epoch = 0;
  const store = { instances: { claim: async () => ++epoch } } as unknown as Store;
  const h = new ActorHost({
    nodeId: 'node-a',
    store,
    leases,
    behavior: () => ({ handlers: {}, onStop: async (_ctx, reason) => void stops.push(reason) }),
    log,
    maxQueue: 10,
    safetyMarginMs: 50,
    drainTimeoutMs: 1000,
  });
  h.start();
  return h;
}

describe('ActorHost lease renewal', () => {
  it('a renewal that learns nothing (a Redis blip) stops no actor; the retry renews it', async () => {
    const leases = new FlakyLeases(900);
    const stops: StopReason[] = [];
    const h = host(leases, stops);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    leases.unreachable = true;
    // Longer than one renewal period (300 ms), shorter than the lease's validity.
    await sleep(450);
    expect(stops, 'stopped during the blip').to.deep.equal([]);
    expect(h.get('inst-1')?.state).to.equal('active');
    const duringBlip = leases.renewals;
    leases.unreachable = false;
    await sleep(200);
    expect(leases.renewals, 'retried sooner than the next period').to.be.greaterThan(duringBlip);
    // Well past the first lease's validity: renewed, still running.
    await sleep(900);
    expect(stops).to.deep.equal([]);
    expect(h.get('inst-1')?.state).to.equal('active');
    await h.stopAll('shutdown');
  });

  it('an undecided lease still stops once its validity has run out on the monotonic clock', async () => {
    const leases = new FlakyLeases(600);
    const stops: StopReason[] = [];
    const h = host(leases, stops);
    expect(await h.activate('inst-2')).to.not.equal(undefined);
    leases.unreachable = true;
    await sleep(900);
    expect(stops).to.deep.equal(['lease-lost']);
    expect(h.get('inst-2')).to.equal(undefined);
    await h.stopAll('shutdown');
  });

  it('a lease a majority refuses stops its actor at once', async () => {
    const leases = new FlakyLeases(3000);
    const stops: StopReason[] = [];
    const h = host(leases, stops);
    expect(await h.activate('inst-3')).to.not.equal(undefined);
    // Someone else's now: the next renewal (within TTL/3 = 1 s) finds it lost, long before it would lapse.
    await leases.inner.close();
    await sleep(1200);
    expect(stops).to.deep.equal(['lease-lost']);
    await h.stopAll('shutdown');
  });
});

describe('ActorHost activation', () => {
  it('a claim that outlasts the lease activates nothing and releases the lease', async () => {
    const leases = new FlakyLeases(400);
    const stops: StopReason[] = [];
    let activations = 0;
    // The store answers the claim after the lease has run out (a paused process, a slow store).
    const store = {
      instances: {
        claim: async () => {
          await sleep(500);
          return 1;
        },
      },
    } as unknown as Store;
    const h = new ActorHost({
      nodeId: 'node-a',
      store,
      leases,
      behavior: () => ({
        handlers: {},
        onActivate: async () => void activations++,
        onStop: async (_ctx, reason) => void stops.push(reason),
      }),
      log,
      maxQueue: 10,
      safetyMarginMs: 50,
      drainTimeoutMs: 1000,
    });
    h.start();
    expect(await h.activate('inst-slow')).to.equal(undefined);
    expect(activations).to.equal(0);
    expect(h.size).to.equal(0);
    // Released: another node (here, this one again) can take it at once.
    expect(await leases.inner.acquire('inst-slow')).to.not.equal(undefined);
    await h.stopAll('shutdown');
  });
});
