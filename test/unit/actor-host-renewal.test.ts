import { expect } from 'chai';
import { pino } from 'pino';
import { ActorHost } from '../../src/cluster/actor-host.js';
import { LocalLeaseManager, nodeResource } from '../../src/cluster/lease-manager.js';
import type { HolderState, Lease, LeaseManager, RenewOutcome } from '../../src/cluster/lease-manager.js';
import { LocalOwnerDirectory } from '../../src/cluster/owner-directory.js';
import type { StopReason } from '../../src/actors/instance-actor.js';
import type { InstanceOwnership, OwnerHolder } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock } from '../helpers/manual-clock.js';

const log = pino({ level: 'silent' });

/** Leases of one process whose renewals can be made undecided (Redis unreachable) or whose judgement unknown. */
class FlakyLeases implements LeaseManager {
  readonly inner: LocalLeaseManager;
  /** While true, renew() learns nothing (every master failed). */
  unreachable = false;
  /** While set, holderState() cannot tell (a young Redis incarnation): ask again after this. */
  youngFor: number | undefined;
  renewals = 0;

  constructor(
    readonly ttlMs: number,
    readonly clock: ManualClock,
  ) {
    this.inner = new LocalLeaseManager(ttlMs, clock);
  }
  acquire(resource: string) {
    return this.inner.acquire(resource);
  }
  async renew(lease: Lease): Promise<RenewOutcome> {
    this.renewals++;
    if (this.unreachable) return { kind: 'undecided' };
    return this.inner.renew(lease);
  }
  release(lease: Lease) {
    return this.inner.release(lease);
  }
  async holderState(resource: string, token: string): Promise<HolderState> {
    if (this.youngFor !== undefined) return { kind: 'unknown', retryInMs: this.youngFor };
    return this.inner.holderState(resource, token);
  }
  close() {
    return this.inner.close();
  }
}

/**
 * The store's ownership records and nodes' heartbeats, in memory; `slow` delays every claim (a paused
 * process, a slow store). Heartbeats are aged by `clock`, the store's.
 */
class Ownership {
  readonly rows = new Map<string, InstanceOwnership>();
  readonly beats = new Map<string, { token: string; at: number }>();
  slow: (() => Promise<void>) | undefined;
  /** Runs after each ownership read, before it is answered (a read whose answer goes stale meanwhile). */
  afterRead: (() => Promise<void>) | undefined;

  constructor(readonly clock?: ManualClock) {}

  asStore(): Store {
    const now = () => this.clock?.now() ?? 0;
    const instances = {
      heartbeat: async (holder: OwnerHolder) => void this.beats.set(holder.node, { token: holder.token, at: now() }),
      heartbeats: async (nodes: string[]) =>
        new Map(
          nodes.flatMap((n) => {
            const b = this.beats.get(n);
            return b ? [[n, { token: b.token, ageMs: now() - b.at }]] : [];
          }),
        ),
      endHeartbeat: async (holder: OwnerHolder) => {
        if (this.beats.get(holder.node)?.token === holder.token) this.beats.delete(holder.node);
      },
      ownership: async (ids: string[]) => {
        const read = new Map(ids.flatMap((id) => (this.rows.has(id) ? [[id, { ...this.rows.get(id)! }]] : [])));
        await this.afterRead?.();
        return read;
      },
      claimFrom: async (claims: { id: string; epoch: number }[], holder: OwnerHolder) => {
        await this.slow?.();
        const taken = new Map<string, number>();
        for (const c of claims) {
          const row = this.rows.get(c.id);
          if (row?.epoch !== c.epoch) continue;
          this.rows.set(c.id, { epoch: c.epoch + 1, holder });
          taken.set(c.id, c.epoch + 1);
        }
        return taken;
      },
      release: async (id: string, epoch: number) => {
        const row = this.rows.get(id);
        if (row?.epoch === epoch) this.rows.set(id, { epoch });
      },
    };
    return { instances } as unknown as Store;
  }

  add(...ids: string[]): this {
    for (const id of ids) this.rows.set(id, { epoch: 0 });
    return this;
  }
}

async function host(leases: FlakyLeases, stops: StopReason[], ownership = new Ownership().add('inst-1', 'inst-2')) {
  const directory = new LocalOwnerDirectory();
  const h = new ActorHost({
    nodeId: 'node-a',
    store: ownership.asStore(),
    leases,
    directory,
    behavior: () => ({ handlers: {}, onStop: async (_ctx, reason) => void stops.push(reason) }),
    log,
    maxQueue: 10,
    safetyMarginMs: 50,
    drainTimeoutMs: 1000,
    clock: leases.clock,
  });
  await h.start();
  return { h, ownership, directory };
}

describe('ActorHost: one node lease for every actor', () => {
  it('gives the event loop a turn between activations: a large batch cannot starve the lease renewal', async () => {
    const leases = new FlakyLeases(900, new ManualClock());
    const ids = Array.from({ length: 200 }, (_, i) => `inst-${i}`);
    const { h } = await host(leases, [], new Ownership().add(...ids));
    // A real timer, as the renewal's is: it runs only when the batch lets the event loop turn.
    let startedWhenTimerRan = -1;
    setTimeout(() => (startedWhenTimerRan = h.size), 0);
    await h.activateMany(ids);
    expect(h.size).to.equal(200);
    expect(startedWhenTimerRan, 'actors started when the timer ran').to.be.within(0, 199);
    await h.stopAll('shutdown');
  });

  it('a renewal that learns nothing (a Redis blip) stops no actor; the retry renews it', async () => {
    const leases = new FlakyLeases(900, new ManualClock());
    const stops: StopReason[] = [];
    const { h } = await host(leases, stops);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    leases.unreachable = true;
    // Longer than one renewal period (300 ms), shorter than the lease's validity.
    await leases.clock.advance(450);
    expect(stops, 'stopped during the blip').to.deep.equal([]);
    expect(h.leaseState).to.equal('undecided');
    const duringBlip = leases.renewals;
    leases.unreachable = false;
    await leases.clock.advance(100);
    expect(leases.renewals, 'retried sooner than the next period').to.be.greaterThan(duringBlip);
    await leases.clock.advance(1000);
    expect(stops).to.deep.equal([]);
    expect(h.get('inst-1')?.state).to.equal('active');
    await h.stopAll('shutdown');
  });

  it('an undecided node lease still stops every actor once its validity has run out', async () => {
    const leases = new FlakyLeases(600, new ManualClock());
    const stops: StopReason[] = [];
    const { h } = await host(leases, stops);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    expect(await h.activate('inst-2')).to.not.equal(undefined);
    leases.unreachable = true;
    // Valid for 592 ms (the TTL less the drift allowance), less the 50 ms safety margin.
    await leases.clock.advance(500);
    expect(stops).to.deep.equal([]);
    await leases.clock.advance(100);
    expect(stops).to.deep.equal(['lease-lost', 'lease-lost']);
    expect(h.size).to.equal(0);
    await h.stopAll('shutdown');
  });

  it('a node lease refused at renewal stops every actor at once; the next lease takes them back', async () => {
    const leases = new FlakyLeases(3000, new ManualClock());
    const stops: StopReason[] = [];
    const { h, ownership } = await host(leases, stops);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    const before = ownership.rows.get('inst-1')!;
    // Gone behind the node's back: the next renewal (within TTL/3 = 1 s) is refused.
    await leases.inner.close();
    await leases.clock.advance(1000);
    expect(stops).to.deep.equal(['lease-lost']);
    expect(h.leaseState).to.equal('lost');
    // The next period takes a new node lease; the old token's holder record is judged gone.
    await leases.clock.advance(1000);
    expect(h.leaseState).to.equal('held');
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    const after = ownership.rows.get('inst-1')!;
    expect(after.epoch).to.equal(before.epoch + 1);
    expect(after.holder?.token).to.not.equal(before.holder?.token);
    await h.stopAll('shutdown');
  });
});

/** A 1.5 s TTL on a fake clock that also ages the store's heartbeats. */
function withHeartbeats() {
  const clock = new ManualClock();
  return { clock, leases: new FlakyLeases(1500, clock), ownership: new Ownership(clock) };
}

/** node-a's host, and inst-1 held at epoch 4 by node-b under a live lease (`other`). */
async function heldByNodeB() {
  const leases = new FlakyLeases(1500, new ManualClock());
  const other = (await leases.inner.acquire(nodeResource('node-b')))!;
  const ownership = new Ownership();
  ownership.rows.set('inst-1', { epoch: 4, holder: { node: 'node-b', token: other.token } });
  const { h } = await host(leases, [], ownership);
  return { leases, other, ownership, h };
}

describe('ActorHost: taking instances over', () => {
  it("never takes an instance whose holder's lease is alive; takes it once that lease is gone", async () => {
    const { leases, other, ownership, h } = await heldByNodeB();
    const report = await h.activateMany(['inst-1']);
    expect(h.get('inst-1')).to.equal(undefined);
    expect(report.busy).to.have.length(1);
    expect(report.busy[0]).to.deep.include({ instanceId: 'inst-1', node: 'node-b' });
    expect(report.busy[0]!.expiresInMs).to.be.within(1, 1500);
    expect(ownership.rows.get('inst-1')!.epoch, 'no claim while the holder may act').to.equal(4);
    await leases.inner.release(other);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    expect(ownership.rows.get('inst-1')).to.deep.include({ epoch: 5 });
    await h.stopAll('shutdown');
  });

  it('a handoff hint while a pass judges the instance busy looks again: the release is not left to the next pass', async () => {
    const { ownership, h } = await heldByNodeB();
    let answer: (() => void) | undefined;
    ownership.afterRead = () => new Promise<void>((resolve) => (answer = resolve));
    // The reconcile pass reads node-b's hold...
    const pass = h.activateMany(['inst-1']);
    for (let i = 0; i < 20 && !answer; i++) await new Promise((resolve) => setImmediate(resolve));
    expect(answer, 'the pass is reading').to.be.a('function');
    ownership.afterRead = undefined;
    // ...node-b hands the instance off (lets it go, then hints this node) before the pass has judged it.
    await ownership.asStore().instances.release('inst-1', 4);
    const hint = h.activate('inst-1');
    answer!();
    expect((await pass).busy, 'the pass judged what it read').to.have.length(1);
    expect(await hint, 'the hint took it').to.not.equal(undefined);
    expect(ownership.rows.get('inst-1')).to.deep.include({ epoch: 5 });
    await h.stopAll('shutdown');
  });

  it('a holder that cannot be judged yet (a young Redis incarnation) is waited for, not taken over', async () => {
    const clock = new ManualClock();
    const leases = new FlakyLeases(1500, clock);
    const ownership = new Ownership();
    // Its lease is nowhere: with an old incarnation that means "gone"; with a young one, maybe forgotten.
    ownership.rows.set('inst-1', { epoch: 2, holder: { node: 'node-b', token: 'tb' } });
    const { h } = await host(leases, [], ownership);
    leases.youngFor = 1200;
    const report = await h.activateMany(['inst-1']);
    expect(report.retryInMs).to.equal(1200);
    expect(h.get('inst-1')).to.equal(undefined);
    expect(ownership.rows.get('inst-1')!.epoch).to.equal(2);
    leases.youngFor = undefined;
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    await h.stopAll('shutdown');
  });

  it('a holder that Redis calls gone but the store heard from within a TTL (two Redis masters) is waited for', async () => {
    const { clock, leases, ownership } = withHeartbeats();
    // node-b holds inst-1 under a lease this node's Redis has never seen (it renews on another master).
    ownership.rows.set('inst-1', { epoch: 7, holder: { node: 'node-b', token: 'tb' } });
    await ownership.asStore().instances.heartbeat({ node: 'node-b', token: 'tb' });
    const { h } = await host(leases, [], ownership);
    await clock.advance(1000);
    const report = await h.activateMany(['inst-1']);
    expect(h.get('inst-1')).to.equal(undefined);
    expect(ownership.rows.get('inst-1')!.epoch, 'no claim while the holder beats').to.equal(7);
    expect(report.retryInMs).to.equal(500);
    // node-b keeps renewing (its heartbeat moves on): still not taken.
    await clock.advance(400);
    await ownership.asStore().instances.heartbeat({ node: 'node-b', token: 'tb' });
    await clock.advance(1000);
    expect(await h.activate('inst-1')).to.equal(undefined);
    // Silent for a TTL: gone by both witnesses, taken.
    await clock.advance(500);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    expect(ownership.rows.get('inst-1')).to.deep.include({ epoch: 8 });
    await h.stopAll('shutdown');
  });

  it('a heartbeat under another token (the holder lost its lease and took a new one) is no witness', async () => {
    const { leases, ownership } = withHeartbeats();
    ownership.rows.set('inst-1', { epoch: 3, holder: { node: 'node-b', token: 'old' } });
    await ownership.asStore().instances.heartbeat({ node: 'node-b', token: 'new' });
    const { h } = await host(leases, [], ownership);
    expect(await h.activate('inst-1')).to.not.equal(undefined);
    await h.stopAll('shutdown');
  });

  it("beats at each renewal under its own lease's token, and ends its heartbeat when it stops", async () => {
    const { clock, leases, ownership } = withHeartbeats();
    ownership.add('inst-1');
    const { h } = await host(leases, [], ownership);
    await h.activate('inst-1');
    const first = ownership.beats.get('node-a');
    expect(first?.token).to.equal(ownership.rows.get('inst-1')!.holder!.token);
    await clock.advance(600);
    expect(ownership.beats.get('node-a')!.at, 'renewed every TTL/3').to.be.greaterThan(first!.at);
    await h.stopAll('shutdown');
    expect(ownership.beats.has('node-a')).to.equal(false);
  });

  it('letting an instance go clears the holder and the hint, so the next node need not wait', async () => {
    const leases = new FlakyLeases(1500, new ManualClock());
    const { h, ownership, directory } = await host(leases, []);
    await h.activate('inst-1');
    expect(ownership.rows.get('inst-1')?.holder?.node).to.equal('node-a');
    expect(await directory.lookup(['inst-1'])).to.deep.equal(['node-a']);
    await h.deactivate('inst-1', 'handoff');
    expect(ownership.rows.get('inst-1')).to.deep.equal({ epoch: 1 });
    expect(await directory.lookup(['inst-1'])).to.deep.equal([undefined]);
    await h.stopAll('shutdown');
  });

  it('claims that outlast the node lease activate nothing and are let go', async () => {
    const clock = new ManualClock();
    const leases = new FlakyLeases(400, clock);
    const stops: StopReason[] = [];
    const ownership = new Ownership().add('inst-slow');
    ownership.slow = () => clock.wait(500);
    leases.unreachable = true;
    const { h } = await host(leases, stops, ownership);
    const activation = h.activate('inst-slow');
    await clock.advance(500);
    expect(await activation).to.equal(undefined);
    expect(h.size).to.equal(0);
    // Taken in the store, then let go: another node can take it at once.
    expect(ownership.rows.get('inst-slow')).to.deep.equal({ epoch: 1 });
    await h.stopAll('shutdown');
  });
});
