import { expect } from 'chai';
import { pino } from 'pino';
import type { ActivationReport, HostedActor, HostedActors } from '../../src/cluster/actor-host.js';
import type { Membership, NodeInfo } from '../../src/cluster/membership.js';
import { placeInstance } from '../../src/cluster/placement.js';
import { Reconciler } from '../../src/cluster/reconciler.js';
import type { Router } from '../../src/cluster/router.js';
import type { StopReason } from '../../src/actors/instance-actor.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const log = pino({ level: 'silent' });
const ME = 'node-a';
const INTERVAL = 1000;

/** Lets a pass started by a timer run to its end (its awaits are all on promises already settled). */
async function flush(): Promise<void> {
  for (let i = 0; i < 10; i++) await settle();
}

/** The store's runnable set and accounts, moved by the test. */
class Instances {
  version = 0;
  runnable: string[];
  disabled = false;

  /** Every instance created, runnable or not (a logged-out number stays). */
  readonly all = new Set<string>();

  constructor(count: number) {
    this.runnable = Array.from({ length: count }, (_, i) => `inst-${i}`);
    for (const id of this.runnable) this.all.add(id);
  }

  set(ids: string[]): void {
    this.runnable = ids;
    for (const id of ids) this.all.add(id);
    this.version++;
  }

  store(): Store {
    return {
      instances: {
        runnableVersion: async () => this.version,
        listRunnable: async () => [...this.runnable],
        findById: async (id: string) => (this.all.has(id) ? { id, accountId: 'acc' } : undefined),
      },
      accounts: { findById: async () => ({ id: 'acc', disabledAt: this.disabled ? new Date().toISOString() : null }) },
    } as unknown as Store;
  }
}

/**
 * A node's actors: activateMany starts every instance not held elsewhere; `held` names the ones another
 * node holds, and until when (its lease's end on the clock). Counts every lookup, to tell a walk over every
 * instance from a look at a few.
 */
class Host implements HostedActors {
  readonly actors = new Map<string, HostedActor>();
  readonly held = new Map<string, { node: string; until: number }>();
  readonly batches: string[][] = [];
  readonly stopped: [string, StopReason][] = [];
  generation = 0;
  lookups = 0;
  /** Calls of ids(): one per walk over every instance (its look at this node's actors). */
  walks = 0;

  constructor(private readonly clock: ManualClock) {}

  get size(): number {
    return this.actors.size;
  }
  ids(): string[] {
    this.walks++;
    return [...this.actors.keys()];
  }
  get(id: string): HostedActor | undefined {
    this.lookups++;
    return this.actors.get(id);
  }
  start(id: string): void {
    this.actors.set(id, {
      state: 'active',
      epoch: 1,
      queueLength: 0,
      lastActivity: this.clock.now(),
    } as unknown as HostedActor);
    this.generation++;
  }
  async activate(id: string): Promise<HostedActor | undefined> {
    await this.activateMany([id]);
    return this.actors.get(id);
  }
  async activateMany(ids: string[]): Promise<ActivationReport> {
    this.batches.push(ids);
    const report: ActivationReport = { busy: [] };
    for (const id of ids) {
      const h = this.held.get(id);
      if (h && h.until > this.clock.now()) {
        report.busy.push({ instanceId: id, node: h.node, expiresInMs: h.until - this.clock.now() });
      } else if (!this.actors.has(id)) this.start(id);
    }
    return report;
  }
  async deactivate(id: string, reason: StopReason): Promise<void> {
    if (!this.actors.delete(id)) return;
    this.generation++;
    this.stopped.push([id, reason]);
  }
}

class Members implements Membership {
  #listeners: ((nodes: NodeInfo[]) => void)[] = [];
  constructor(public ids: string[]) {}
  async start(): Promise<void> {}
  async stop(): Promise<void> {}
  liveNodes(): NodeInfo[] {
    return this.ids.map((nodeId) => ({ nodeId, url: '', startedAt: '', actors: 0, heartbeatAt: '' }));
  }
  async refresh(): Promise<NodeInfo[]> {
    return this.liveNodes();
  }
  onChange(listener: (nodes: NodeInfo[]) => void): void {
    this.#listeners.push(listener);
  }
  set(ids: string[]): void {
    this.ids = ids;
    for (const l of this.#listeners) l(this.liveNodes());
  }
}

function setup(count: number, nodes: string[], options: { moves?: number; idleMs?: number } = {}) {
  const clock = new ManualClock();
  const instances = new Instances(count);
  const host = new Host(clock);
  const members = new Members(nodes);
  const handoffs: [string, string][] = [];
  const router = {
    handOff: async (id: string, to: string) => void handoffs.push([id, to]),
  } as unknown as Router;
  const reconciler = new Reconciler({
    nodeId: ME,
    store: instances.store(),
    host,
    membership: members,
    router,
    log,
    intervalMs: INTERVAL,
    movesPerWindow: options.moves ?? 20,
    moveWindowMs: 10_000,
    idleMs: options.idleMs ?? 60_000,
    clock,
  });
  const placedHere = (live: string[]) => instances.runnable.filter((id) => placeInstance(id, live) === ME);
  return { clock, instances, host, members, handoffs, reconciler, placedHere };
}

describe('Reconciler', () => {
  let stop: (() => void) | undefined;
  afterEach(() => stop?.());

  it('activates what placement gives it, then at rest looks at no instance until something moves', async () => {
    const t = setup(2000, [ME, 'node-b']);
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await flush();
    expect([...t.host.actors.keys()].sort()).to.deep.equal(t.placedHere([ME, 'node-b']).sort());

    await t.clock.advance(INTERVAL); // its own activations moved the actors: one more walk, finding nothing
    expect(t.host.batches).to.have.length(1);
    t.host.lookups = 0;
    await t.clock.advance(10 * INTERVAL);
    expect(t.host.lookups, 'lookups in ten passes at rest').to.equal(0);
    expect(t.host.batches).to.have.length(1);

    // A number linked: the version moves, the next pass walks and takes it if it is placed here.
    const extra = Array.from({ length: 40 }, (_, i) => `new-${i}`);
    t.instances.set([...t.instances.runnable, ...extra]);
    await t.clock.advance(INTERVAL);
    const mine = extra.filter((id) => placeInstance(id, [ME, 'node-b']) === ME);
    expect(mine).to.not.be.empty;
    expect(t.host.batches.at(-1)).to.deep.equal(mine);
    for (const id of mine) expect(t.host.actors.has(id), id).to.equal(true);
  });

  it('activates again an actor that stopped on its own (a lost lease, a fence) on the next pass', async () => {
    const t = setup(200, [ME]);
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(3 * INTERVAL);
    expect(t.host.size).to.equal(200);
    // Stopped by the actor host, not by the reconciler: only its generation says so.
    t.host.actors.delete('inst-7');
    t.host.generation++;
    await t.clock.advance(INTERVAL);
    expect(t.host.actors.has('inst-7')).to.equal(true);
    expect(t.host.batches.at(-1)).to.deep.equal(['inst-7']);
  });

  it("claims a departed node's instances when its lease lapses, asking for those alone meanwhile", async () => {
    const t = setup(3000, [ME, 'node-b']);
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(2 * INTERVAL);
    const bs = t.instances.runnable.filter((id) => placeInstance(id, [ME, 'node-b']) === 'node-b');
    // node-b dies: its membership record is gone, its lease has 1,200 ms to run.
    const lapse = t.clock.now() + 1200;
    for (const id of bs) t.host.held.set(id, { node: 'node-b', until: lapse });
    t.host.batches.length = 0;
    const walks = t.host.walks;
    t.members.set([ME]);
    await flush();
    expect(t.host.walks, 'walks after the departure').to.equal(walks);
    expect(t.host.batches).to.have.length(1);
    expect([...t.host.batches[0]!].sort()).to.deep.equal([...bs].sort());

    // Fast polls until the lapse each ask for the waiting instances alone, without walking the 3,000.
    t.host.lookups = 0;
    await t.clock.advance(1100);
    expect(t.host.batches.length).to.be.greaterThan(2);
    for (const b of t.host.batches.slice(1)) expect(b).to.have.length(bs.length);
    expect(t.host.lookups, 'lookups per fast poll').to.be.at.most(2 * bs.length * t.host.batches.length);
    expect(bs.some((id) => t.host.actors.has(id))).to.equal(false);

    // Looked at again right as the lease lapses (and a few ms of margin), not at the next interval.
    await t.clock.advance(lapse - t.clock.now() + 10);
    for (const id of bs) expect(t.host.actors.has(id), id).to.equal(true);
    expect(t.host.size).to.equal(3000);
    expect(t.host.walks, 'walks until the claim').to.equal(walks);
  });

  it('after a departure and a join, runs exactly what placement gives it', async () => {
    const t = setup(1500, [ME, 'node-b', 'node-c'], { moves: 10_000 });
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(2 * INTERVAL);
    expect([...t.host.actors.keys()].sort()).to.deep.equal(t.placedHere([ME, 'node-b', 'node-c']).sort());
    for (const id of t.instances.runnable) {
      const on = placeInstance(id, [ME, 'node-b', 'node-c']);
      if (on !== ME) t.host.held.set(id, { node: on!, until: Infinity });
    }
    // node-c leaves: its instances are free at once (a graceful stop), node-b's stay held.
    for (const [id, h] of t.host.held) if (h.node === 'node-c') t.host.held.delete(id);
    t.members.set([ME, 'node-b']);
    await t.clock.advance(2 * INTERVAL);
    expect([...t.host.actors.keys()].sort()).to.deep.equal(t.placedHere([ME, 'node-b']).sort());
    t.members.set([ME, 'node-b', 'node-d']);
    await t.clock.advance(2 * INTERVAL);
    expect([...t.host.actors.keys()].sort()).to.deep.equal(t.placedHere([ME, 'node-b', 'node-d']).sort());
    expect(t.handoffs.map(([, to]) => to)).to.satisfy((to: string[]) => to.every((n) => n === 'node-d'));
    expect(t.handoffs).to.not.be.empty;
  });

  it('hands off to a joining node at the rate limit, and carries on with no other change', async () => {
    const t = setup(600, [ME], { moves: 5 });
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(2 * INTERVAL);
    expect(t.host.size).to.equal(600);
    t.members.set([ME, 'node-c']);
    await flush();
    expect(t.handoffs).to.have.length(5);
    await t.clock.advance(10_000);
    expect(t.handoffs).to.have.length(10);
    await t.clock.advance(10_000);
    expect(t.handoffs).to.have.length(15);
    for (const [id, to] of t.handoffs) {
      expect(to).to.equal('node-c');
      expect(placeInstance(id, [ME, 'node-c'])).to.equal('node-c');
      expect(t.host.actors.has(id)).to.equal(false);
    }
  });

  it('stops the actor of an instance no longer runnable once it is idle, without walking again', async () => {
    const t = setup(100, [ME], { idleMs: 5000 });
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(2 * INTERVAL);
    t.instances.set(t.instances.runnable.filter((id) => id !== 'inst-3'));
    await t.clock.advance(2 * INTERVAL);
    expect(t.host.actors.has('inst-3'), 'still within its idle time').to.equal(true);
    t.host.lookups = 0;
    await t.clock.advance(2500);
    expect(t.host.lookups, 'no walk over the 99 others while it idles').to.be.below(20);
    await t.clock.advance(2500);
    expect(t.host.stopped).to.deep.equal([['inst-3', 'idle']]);
  });

  it("stops at once the actors of a disabled account's instances", async () => {
    const t = setup(50, [ME]);
    stop = () => t.reconciler.stop();
    t.reconciler.start();
    await t.clock.advance(2 * INTERVAL);
    t.instances.disabled = true;
    t.instances.set([]);
    await t.clock.advance(INTERVAL);
    expect(t.host.size).to.equal(0);
    expect(new Set(t.host.stopped.map(([, r]) => r))).to.deep.equal(new Set(['disabled']));
  });
});
