import { expect } from 'chai';
import { pino } from 'pino';
import type { ActorDescription } from '../../src/actors/actor-calls.js';
import { InstanceActor } from '../../src/actors/instance-actor.js';
import type { ActorBehavior, ActorContext, StopReason } from '../../src/actors/instance-actor.js';
import {
  AppError,
  FencedError,
  NotOwnerError,
  OutcomeUnknownError,
  TimeoutError,
  UnavailableError,
} from '../../src/errors.js';
import type { ConnectionInfo, OwnedStateOp } from '../../src/store/records.js';
import type { Store } from '../../src/store/store.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const log = pino({ level: 'silent' });

/** A promise opened from outside. */
function gate() {
  let open!: () => void;
  const opened = new Promise<void>((r) => (open = r));
  return { opened, open };
}

/** The only two store methods an actor uses; either can be told to refuse the epoch. */
class FakeStore {
  writes: { instanceId: string; epoch: number; ops: OwnedStateOp[] }[] = [];
  connections: ConnectionInfo[] = [];
  fenced = false;
  failure: Error | undefined;

  readonly ownedState = {
    write: async (instanceId: string, epoch: number, ops: OwnedStateOp[]) => {
      await settle();
      if (this.failure) throw this.failure;
      if (this.fenced) throw new FencedError(instanceId, epoch);
      this.writes.push({ instanceId, epoch, ops });
    },
  };

  readonly instances = {
    setConnection: async (id: string, epoch: number, connection: ConnectionInfo) => {
      await settle();
      if (this.fenced) throw new FencedError(id, epoch);
      this.connections.push(connection);
    },
  };

  asStore(): Store {
    return this as unknown as Store;
  }
}

type Turn = (ctx: ActorContext, n: number) => Promise<unknown>;

interface Harness {
  actor: InstanceActor;
  store: FakeStore;
  /** The actor's clock: deadlines, drains and the lease run on it, and only the test moves it. */
  clock: ManualClock;
  /** The clock's time until which the lease is ours; tests move it. */
  lease: { validUntil: number };
  selfStops: StopReason[];
  stops: StopReason[];
  /** `start n` / `end n` for every turn, in the order they happened. */
  events: string[];
  /** How many turns the handler started. */
  turns: () => number;
  describe: (timeoutMs?: number) => Promise<ActorDescription>;
}

const WRITE_OP: OwnedStateOp = { namespace: 'creds', key: 'k', value: 'v' };
const CONNECTED: ConnectionInfo = {
  state: 'connected',
  numberJid: '15550000000@s.whatsapp.net',
  updatedAt: new Date(0).toISOString(),
};

function harness(options: { turn?: Turn; maxQueue?: number; onActivate?: () => Promise<void> } = {}): Harness {
  const store = new FakeStore();
  const clock = new ManualClock();
  const lease = { validUntil: clock.now() + 60_000 };
  const selfStops: StopReason[] = [];
  const stops: StopReason[] = [];
  const events: string[] = [];
  let turns = 0;
  const turn = options.turn ?? (async () => undefined);
  const behavior: ActorBehavior = {
    onActivate: async () => {
      events.push('activate');
      await options.onActivate?.();
    },
    onStop: async (_ctx, reason) => {
      stops.push(reason);
    },
    handlers: {
      describe: async (ctx) => {
        const n = turns++;
        events.push(`start ${n}`);
        try {
          await turn(ctx, n);
        } finally {
          events.push(`end ${n}`);
        }
        return { instanceId: ctx.instanceId, nodeId: ctx.nodeId, epoch: ctx.epoch, state: actor.state };
      },
    },
  };
  const actor = new InstanceActor({
    instanceId: 'inst-1',
    nodeId: 'node-a',
    epoch: 7,
    store: store.asStore(),
    behavior,
    log,
    leaseValidUntil: () => lease.validUntil,
    clock,
    safetyMarginMs: 250,
    maxQueue: options.maxQueue ?? 1000,
    onSelfStop: (reason) => selfStops.push(reason),
  });
  return {
    actor,
    store,
    clock,
    lease,
    selfStops,
    stops,
    events,
    turns: () => turns,
    describe: (timeoutMs = 5000) => actor.call('describe', {}, timeoutMs),
  };
}

/** The rejection of a promise (fails the test when it resolves). */
async function rejection(p: Promise<unknown>): Promise<AppError> {
  try {
    await p;
  } catch (err) {
    expect(err).to.be.instanceOf(AppError);
    return err as AppError;
  }
  throw new Error('expected a rejection');
}

/** Whether a promise has settled by now (without waiting for it). */
function tracked(p: Promise<unknown>): () => boolean {
  let settled = false;
  p.then(
    () => (settled = true),
    () => (settled = true),
  );
  return () => settled;
}

describe('InstanceActor', () => {
  it('runs calls one at a time, in the order they arrived', async () => {
    const delays = [40, 0, 25, 5, 10, 0];
    const h = harness({ turn: (_ctx, n) => h.clock.wait(delays[n]!) });
    await h.actor.activate();
    const resolved: number[] = [];
    const calls = delays.map((_, i) => h.describe().then((r) => (resolved.push(i), r)));
    expect(h.actor.queueLength).to.equal(delays.length);
    const all = Promise.all(calls);
    await h.clock.advance(delays.reduce((a, b) => a + b));
    const results = await all;
    expect(resolved).to.deep.equal([0, 1, 2, 3, 4, 5]);
    expect(h.events).to.deep.equal(['activate', ...delays.flatMap((_, i) => [`start ${i}`, `end ${i}`])]);
    expect(results[0]).to.deep.equal({ instanceId: 'inst-1', nodeId: 'node-a', epoch: 7, state: 'active' });
    expect(h.actor.queueLength).to.equal(0);
    expect(h.actor.state).to.equal('active');
  });

  it('refuses a call beyond maxQueue with UnavailableError', async () => {
    const g = gate();
    const h = harness({ maxQueue: 2, turn: () => g.opened });
    await h.actor.activate();
    const running = h.describe();
    const queued = [h.describe(), h.describe()];
    expect(h.actor.queueLength).to.equal(3);
    const err = await rejection(h.describe());
    expect(err).to.be.instanceOf(UnavailableError);
    expect(err.code).to.equal('unavailable');
    expect(h.actor.queueLength).to.equal(3);
    g.open();
    await Promise.all([running, ...queued]);
    expect(h.turns()).to.equal(3);
    // Room again once the mailbox has emptied.
    await h.describe();
    expect(h.turns()).to.equal(4);
  });

  it('fails a queued call past its deadline with TimeoutError and drops it from the queue', async () => {
    const g = gate();
    const h = harness({ turn: (_ctx, n) => (n === 0 ? g.opened : Promise.resolve()) });
    await h.actor.activate();
    const first = h.describe(5000);
    const late = h.describe(50);
    const after = h.describe(5000);
    expect(h.actor.queueLength).to.equal(3);
    const failed = rejection(late);
    const lateSettled = tracked(late);
    await h.clock.advance(49);
    expect(lateSettled(), 'not before its deadline').to.equal(false);
    await h.clock.advance(1);
    const err = await failed;
    expect(err).to.be.instanceOf(TimeoutError);
    expect(err.code).to.equal('timeout');
    expect(h.actor.queueLength).to.equal(2);
    g.open();
    await first;
    await after;
    // The timed-out call never ran: two turns for the two calls still waited for.
    expect(h.turns()).to.equal(2);
    expect(h.events.filter((e) => e.startsWith('start'))).to.deep.equal(['start 0', 'start 1']);
  });

  it('holds calls made while activating until activate() has run', async () => {
    const g = gate();
    const h = harness({ onActivate: () => g.opened });
    expect(h.actor.state).to.equal('activating');
    const call = h.describe();
    const activated = h.actor.activate();
    await h.clock.advance(40);
    expect(h.turns()).to.equal(0);
    expect(h.actor.state).to.equal('activating');
    expect(h.actor.queueLength).to.equal(1);
    g.open();
    await activated;
    expect(h.actor.state).to.equal('active');
    expect((await call).state).to.equal('active');
    expect(h.events).to.deep.equal(['activate', 'start 0', 'end 0']);
  });

  it('drain() finishes queued calls, and calls made while draining, before it resolves', async () => {
    // src/actors/instance-actor.ts: a draining actor keeps accepting calls (a caller refused while the
    // lease is still ours would retry and fail); refusals with NotOwnerError begin once it is stopped.
    const g = gate();
    const h = harness({ turn: (_ctx, n) => (n === 0 ? g.opened : h.clock.wait(5)) });
    await h.actor.activate();
    const calls = [h.describe(), h.describe(), h.describe()];
    let drained = false;
    const draining = h.actor.drain(5000).then(() => (drained = true));
    expect(h.actor.state).to.equal('draining');
    const late = h.describe();
    await settle();
    expect(drained).to.equal(false);
    g.open();
    const all = Promise.all([...calls, late]);
    await h.clock.advance(15);
    const results = await all;
    await draining;
    expect(results.map((r) => r.state)).to.deep.equal(['draining', 'draining', 'draining', 'draining']);
    expect(h.turns()).to.equal(4);
    expect(h.actor.queueLength).to.equal(0);
    expect(h.selfStops).to.deep.equal([]);
    // A drained actor is then stopped by its host; from then on calls are refused.
    await h.actor.stop('handoff');
    expect(h.stops).to.deep.equal(['handoff']);
    const refused = await rejection(h.describe());
    expect(refused).to.be.instanceOf(NotOwnerError);
    expect(refused.code).to.equal('not_owner');
  });

  it('drain() gives up after its timeout, leaving the rest to stop()', async () => {
    const g = gate();
    const h = harness({ turn: () => g.opened });
    await h.actor.activate();
    const running = h.describe();
    const queued = h.describe();
    const draining = h.actor.drain(80);
    const drained = tracked(draining);
    await h.clock.advance(79);
    expect(drained(), 'not before its timeout').to.equal(false);
    await h.clock.advance(1);
    await draining;
    expect(h.actor.queueLength).to.equal(2);
    await h.actor.stop('shutdown');
    expect(await rejection(queued)).to.be.instanceOf(NotOwnerError);
    g.open();
    await running;
    expect(h.turns()).to.equal(1);
  });

  it('drain() of an idle actor resolves at once', async () => {
    const h = harness();
    await h.actor.activate();
    const timers = h.clock.pending;
    // The clock does not move: a drain that waited for its timeout would never resolve.
    await h.actor.drain(5000);
    expect(h.clock.pending, 'no drain timer was armed').to.equal(timers);
    expect(h.actor.state).to.equal('draining');
  });

  it('drain() during activation runs the calls queued meanwhile once activated', async () => {
    const g = gate();
    const h = harness({ onActivate: () => g.opened });
    const call = h.describe(1200);
    const activated = h.actor.activate();
    const draining = h.actor.drain(800);
    const drained = tracked(draining);
    g.open();
    await activated;
    const outcome = await call.then(
      (r) => `ran in state ${r.state}`,
      (err: unknown) => `failed: ${(err as Error).name}`,
    );
    await settle();
    // "Finishes queued calls": the call queued before the drain must run, and the drain must not wait for
    // its whole timeout with work still queued (the clock has not moved).
    expect(outcome).to.equal('ran in state draining');
    expect(drained()).to.equal(true);
  });

  it('stop() rejects queued calls with NotOwnerError and lets the running one finish', async () => {
    const g = gate();
    const h = harness({ turn: () => g.opened });
    await h.actor.activate();
    const running = h.describe();
    const queued = [h.describe(), h.describe()];
    await settle();
    const stopped = h.actor.stop('shutdown');
    // A graceful stop refuses calls at once and finishes what the network handed over before `stopped`.
    expect(h.actor.state).to.equal('stopping');
    for (const q of queued) {
      const err = await rejection(q);
      expect(err).to.be.instanceOf(NotOwnerError);
      expect(err.code).to.equal('not_owner');
    }
    await stopped;
    expect(h.actor.state).to.equal('stopped');
    expect(h.stops).to.deep.equal(['shutdown']);
    g.open();
    expect((await running).state).to.equal('stopped');
    expect(h.turns()).to.equal(1);
    expect(await rejection(h.describe())).to.be.instanceOf(NotOwnerError);
    // Asked by the host: not a self-stop.
    expect(h.selfStops).to.deep.equal([]);
    // Stopping twice is one stop.
    await h.actor.stop('shutdown');
    expect(h.stops).to.deep.equal(['shutdown']);
  });

  it('refuses a call once the lease is within the safety margin of its end, and stops itself', async () => {
    const h = harness();
    await h.actor.activate();
    // Valid for 100 ms more (350 ms less the 250 ms margin).
    h.lease.validUntil = h.clock.now() + 350;
    await h.describe();
    expect(h.turns()).to.equal(1);
    await h.clock.advance(99);
    expect(h.actor.leaseValid()).to.equal(true);
    await h.clock.advance(1);
    expect(h.actor.leaseValid()).to.equal(false);
    const err = await rejection(h.describe());
    expect(err).to.be.instanceOf(NotOwnerError);
    expect(h.turns(), 'the handler never ran').to.equal(1);
    expect(h.actor.state).to.equal('stopped');
    expect(h.selfStops).to.deep.equal(['lease-lost']);
    await settle();
    expect(h.stops).to.deep.equal(['lease-lost']);
  });

  it('refuses every queued call when the lease is already past (minus the margin)', async () => {
    const h = harness();
    h.lease.validUntil = h.clock.now() + 100; // inside the 250 ms margin from the start
    const calls = [h.describe(), h.describe(), h.describe()];
    await h.actor.activate();
    for (const c of calls) expect(await rejection(c)).to.be.instanceOf(NotOwnerError);
    expect(h.turns()).to.equal(0);
    expect(h.actor.state).to.equal('stopped');
    expect(h.selfStops).to.deep.equal(['lease-lost']);
  });

  it('checks the lease before an owned write made late in a turn', async () => {
    const h = harness({
      turn: async (ctx) => {
        h.lease.validUntil = h.clock.now() - 1; // the lease ran out while the turn worked
        await ctx.writeOwned([WRITE_OP]);
      },
    });
    await h.actor.activate();
    // The turn ran (it may have acted on the network): the caller must not run it again elsewhere.
    expect(await rejection(h.describe())).to.be.instanceOf(OutcomeUnknownError);
    expect(h.store.writes).to.deep.equal([]);
    expect(h.actor.state).to.equal('stopped');
    expect(h.selfStops).to.deep.equal(['lease-lost']);
  });

  it("stops at once when the store refuses an owned write as fenced: the running call's outcome is unknown, the queued one did not run", async () => {
    const h = harness({ turn: (ctx) => ctx.writeOwned([WRITE_OP]) });
    await h.actor.activate();
    await h.describe();
    expect(h.store.writes).to.deep.equal([{ instanceId: 'inst-1', epoch: 7, ops: [WRITE_OP] }]);
    h.store.fenced = true;
    const fencedCall = h.describe();
    const queued = h.describe();
    const err = await rejection(fencedCall);
    expect(err).to.be.instanceOf(OutcomeUnknownError);
    expect(err.code).to.equal('outcome_unknown');
    expect(h.actor.state).to.equal('stopped');
    expect(h.selfStops).to.deep.equal(['fenced']);
    expect(await rejection(queued)).to.be.instanceOf(NotOwnerError);
    expect(h.turns()).to.equal(2);
    await settle();
    expect(h.stops).to.deep.equal(['fenced']);
    expect(h.store.writes).to.have.length(1);
  });

  it('treats a fenced setConnection like a fenced write', async () => {
    const h = harness({
      turn: (ctx) => ctx.setConnection(CONNECTED),
    });
    await h.actor.activate();
    h.store.fenced = true;
    expect(await rejection(h.describe())).to.be.instanceOf(OutcomeUnknownError);
    expect(h.selfStops).to.deep.equal(['fenced']);
    expect(h.store.connections).to.deep.equal([]);
  });

  it('passes other store failures through without stopping', async () => {
    const h = harness({ turn: (ctx) => ctx.writeOwned([WRITE_OP]) });
    await h.actor.activate();
    h.store.failure = new UnavailableError('store down');
    const err = await rejection(h.describe());
    expect(err).to.be.instanceOf(UnavailableError);
    expect(h.actor.state).to.equal('active');
    expect(h.selfStops).to.deep.equal([]);
    h.store.failure = undefined;
    await h.describe();
    expect(h.store.writes).to.have.length(1);
  });

  it('calls onSelfStop once, however many checks fail', async () => {
    const h = harness({
      turn: async (ctx) => {
        await ctx.writeOwned([WRITE_OP]).catch(() => undefined); // fenced
        h.lease.validUntil = 0;
        expect(() => ctx.assertOwner()).to.throw(NotOwnerError);
      },
    });
    await h.actor.activate();
    h.store.fenced = true;
    await h.describe();
    h.actor.selfStop('lease-lost');
    expect(h.selfStops).to.deep.equal(['fenced']);
  });
});

describe('InstanceActor: the lines a call logs carry the request it serves', () => {
  it("ctx.log binds the running call's request id, made at its first line; other calls log without one", async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = pino({ level: 'info' }, { write: (line: string) => void lines.push(JSON.parse(line)) });
    const actor = new InstanceActor({
      instanceId: 'inst-1',
      nodeId: 'node-a',
      epoch: 1,
      store: new FakeStore().asStore(),
      behavior: {
        handlers: {
          describe: async (ctx) => {
            ctx.log.info('before the turn yields');
            await settle();
            ctx.log.info('after it');
            return { instanceId: ctx.instanceId, nodeId: ctx.nodeId, epoch: ctx.epoch, state: 'active' };
          },
        },
      },
      log: logger,
      leaseValidUntil: () => performance.now() + 60_000,
      safetyMarginMs: 250,
      maxQueue: 10,
      onSelfStop: () => undefined,
    });
    await actor.activate();
    await Promise.all([actor.call('describe', {}, 1000, 'req-1'), actor.call('describe', {}, 1000)]);
    await actor.call('describe', {}, 1000, 'req-2');
    expect(lines.map((l) => [l.msg, l.requestId])).to.deep.equal([
      ['before the turn yields', 'req-1'],
      ['after it', 'req-1'],
      ['before the turn yields', undefined],
      ['after it', undefined],
      ['before the turn yields', 'req-2'],
      ['after it', 'req-2'],
    ]);
    for (const l of lines) expect(Object.keys(l).filter((k) => k === 'requestId').length).to.be.at.most(1);
  });
});
