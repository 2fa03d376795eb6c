import type { Logger } from 'pino';
import type { Store } from '../store/store.js';
import type { ActivationReport, HostedActors } from './actor-host.js';
import type { Membership } from './membership.js';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';
import { LoopSlicer } from '../util/loop-slicer.js';
import { PhaseTimer } from '../util/phase-timer.js';
import { PlacementMemo } from './placement.js';
import type { Router } from './router.js';
import { RunnableInstances } from './runnable-instances.js';

/** A pass this long (ms) logs where its time went. */
const SLOW_PASS_MS = 500;
/** How often a node looks while a departed node's lease is about to lapse. */
const FAST_POLL_MS = 250;
/** Past a lease's known expiry: Redis expires a key within a millisecond or so of its PTTL. */
const LAPSE_MARGIN_MS = 5;

export interface ReconcilerOptions {
  nodeId: string;
  store: Store;
  host: HostedActors;
  membership: Membership;
  router: Router;
  log: Logger;
  /** @default 1000 */
  intervalMs: number;
  /** Handoffs allowed per window, per node, so a join does not reconnect thousands of numbers at once. @default 20 */
  movesPerWindow: number;
  /** @default 10000 */
  moveWindowMs: number;
  /** An actor of an instance that need not run is passivated after this long without calls. @default 60000 */
  idleMs: number;
  /** Passes, fast polls and the move window run on it; actors' `lastActivity` must be on it too. @default systemClock */
  clock?: Clock;
}

/** What a walk over every instance depends on: while all of it stays the same, a walk finds nothing new. */
interface Inputs {
  live: string;
  nodes: readonly string[];
  ids: readonly string[];
  current: boolean;
  generation: number;
}

/**
 * Keeps this node's actors matching placement: activates the runnable instances that rendezvous
 * hashing gives to this node and nobody holds, hands off (rate-limited) the ones a joining node now
 * wins, and passivates idle actors of instances that need not run (at once when their account is
 * disabled). A dead node's instances come back here once its node lease has lapsed.
 *
 * A pass walks every runnable instance only when something it depends on moved since the last walk (the
 * live nodes, the runnable list, this node's actors) or the last walk left moves over the rate limit.
 * Otherwise it looks only at what the last walk left waiting: instances another node still held, and
 * actors waiting to be idle long enough. So a node at rest costs a version read a second, and the pass
 * that claims a dead node's instances when its lease lapses asks for those alone.
 */
export class Reconciler {
  #timer: Cancel | undefined;
  #running = false;
  #again = false;
  #moves: number[] = [];
  #fastPoll: Cancel | undefined;
  #fastPollAt = 0;
  readonly #placement = new PlacementMemo();
  readonly #clock: Clock;
  /** The live nodes of the last pass. */
  #live: string[] = [];
  readonly #runnable: RunnableInstances;
  /** What the last walk saw; undefined until the first, and after a walk that must be done again. */
  #walked: Inputs | undefined;
  /** Placed here, wanted by the last walk, not active yet (held elsewhere, or its holder undecided). */
  #waiting: string[] = [];
  /** Actors of instances that need not run, stopped once idle. */
  #idle: string[] = [];
  /** The runnable instances by the node the last walk placed them on (kept up to date by departures). */
  #byNode = new Map<string, string[]>();

  constructor(private readonly options: ReconcilerOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#runnable = new RunnableInstances(options.store.instances, () => this.#clock.now());
  }

  start(): void {
    this.#timer = this.#clock.every(this.options.intervalMs, () => this.kick());
    this.options.membership.onChange(() => this.kick());
    this.kick();
  }

  stop(): void {
    this.#timer?.();
    this.#fastPoll?.();
    this.#timer = undefined;
    this.#fastPoll = undefined;
  }

  /** Runs a pass now (or right after the current one). */
  kick(): void {
    if (this.#running) {
      this.#again = true;
      return;
    }
    this.#running = true;
    void this.#pass()
      .catch((err: unknown) => {
        this.#walked = undefined;
        this.options.log.warn({ err }, 'reconcile pass failed');
      })
      .finally(() => {
        this.#running = false;
        if (this.#again && this.#timer) {
          this.#again = false;
          this.kick();
        }
      });
  }

  async #pass(): Promise<void> {
    const live = this.options.membership.liveNodes().map((n) => n.nodeId);
    if (!live.includes(this.options.nodeId)) return; // not registered (yet, or any more): own nothing new
    const departed = this.#live.some((n) => !live.includes(n));
    this.#live = live;
    const phases = new PhaseTimer(this.#clock);
    const runnable = await this.#runnable.read();
    phases.mark('read');
    // Read before the walk: an actor added or removed while it runs makes the next pass walk again.
    const inputs: Inputs = {
      live: live.join('\u0000'),
      nodes: live,
      ids: runnable.ids,
      current: runnable.current,
      generation: this.options.host.generation,
    };
    const last = this.#walked;
    if (last && last.ids === inputs.ids && last.current === inputs.current && last.generation === inputs.generation) {
      if (last.live === inputs.live) {
        await this.#activate(
          live,
          this.#waiting.filter((id) => !this.options.host.get(id)),
        );
        await this.#passivateIdle();
        return;
      }
      if (live.every((n) => last.nodes.includes(n))) {
        // Nodes left, none joined: only their instances can move, and no actor of this node has to.
        this.#walked = inputs;
        await this.#departed(
          live,
          last.nodes.filter((n) => !live.includes(n)),
        );
        return;
      }
    }
    this.#walked = inputs;
    const place = this.#placement.pass(live);

    // Placing 50,000 instances afresh (a node joined) takes seconds: in slices, so renewals run.
    const slicer = new LoopSlicer();
    const mine: string[] = [];
    const byNode = new Map<string, string[]>(live.map((n) => [n, []]));
    for (const id of runnable.ids) {
      if (slicer.due()) await slicer.yield();
      const node = place(id);
      if (node !== undefined) byNode.get(node)?.push(id);
      if (node === this.options.nodeId && !this.options.host.get(id)) mine.push(id);
    }
    this.#byNode = byNode;
    phases.mark('place');
    await this.#activate(live, mine);
    phases.mark('activate');

    const idle: string[] = [];
    for (const id of this.options.host.ids()) {
      if (slicer.due()) await slicer.yield();
      const target = place(id);
      if (target !== this.options.nodeId && target !== undefined && runnable.has(id)) {
        if (!this.#takeMove()) {
          this.#walked = undefined; // the rest move on a later walk
          continue;
        }
        await this.options.host.deactivate(id, 'handoff');
        await this.options.router.handOff(id, target).catch(() => undefined);
        this.options.log.info({ instanceId: id, to: target }, 'handed off');
      } else if (!runnable.has(id) && runnable.current) {
        // Only a current list says an actor need not run: a held-back one lacks every number linked since.
        idle.push(id);
      }
    }
    this.#idle = idle;
    await this.#passivateIdle();
    phases.mark('hosted');
    const ms = phases.all();
    if (Object.values(ms).reduce((a, b) => a + b, 0) >= SLOW_PASS_MS) {
      this.options.log.info(
        { ms, wanted: mine.length, departed, listed: runnable.ids.length },
        'a slow reconcile pass',
      );
    }
  }

  /**
   * After nodes left: their instances go to their runner-up (`PlacementMemo`), so this node takes the ones
   * now placed here, and nothing else moves. The dead node's lease is running out meanwhile: a walk over
   * every instance here (half a second at 50,000 on this machine) delayed the claims past its lapse.
   */
  async #departed(live: string[], gone: string[]): Promise<void> {
    const started = this.#clock.now();
    const place = this.#placement.pass(live, { keep: true });
    const slicer = new LoopSlicer();
    const mine: string[] = [];
    let moved = 0;
    for (const node of gone) {
      for (const id of this.#byNode.get(node) ?? []) {
        if (slicer.due()) await slicer.yield();
        const to = place(id);
        if (to !== undefined) this.#byNode.get(to)?.push(id);
        if (to === this.options.nodeId && !this.options.host.get(id)) mine.push(id);
        moved++;
      }
      this.#byNode.delete(node);
    }
    const placedMs = this.#clock.now() - started;
    await this.#activate(live, [...this.#waiting.filter((id) => !this.options.host.get(id)), ...mine]);
    const ms = { place: placedMs, activate: this.#clock.now() - started - placedMs };
    if (ms.place + ms.activate >= SLOW_PASS_MS) {
      this.options.log.info({ ms, wanted: mine.length, departed: true, listed: moved }, 'a slow reconcile pass');
    }
  }

  /** Activates `ids` (placed here, not active); the ones still held elsewhere wait for a later pass. */
  async #activate(live: string[], ids: string[]): Promise<void> {
    this.#waiting = ids;
    if (ids.length === 0) return;
    const report = await this.options.host.activateMany(ids);
    this.#waiting = ids.filter((id) => !this.options.host.get(id));
    this.#lookAgain(live, report);
  }

  /** A departed node's lease runs out any moment now: look again right when it lapses. */
  #lookAgain(live: string[], report: ActivationReport): void {
    const liveSet = new Set(live);
    const waits = report.busy.filter((b) => !liveSet.has(b.node)).map((b) => b.expiresInMs + LAPSE_MARGIN_MS);
    if (report.retryInMs !== undefined) waits.push(report.retryInMs);
    if (waits.length) this.#soon(Math.min(...waits));
  }

  async #passivateIdle(): Promise<void> {
    const slicer = new LoopSlicer();
    for (const id of this.#idle) {
      if (slicer.due()) await slicer.yield();
      await this.#passivate(id);
    }
    this.#idle = this.#idle.filter((id) => this.options.host.get(id));
  }

  /** An actor of an instance that need not run: stopped at once if its account is disabled, else when idle. */
  async #passivate(id: string): Promise<void> {
    const actor = this.options.host.get(id);
    if (!actor) return;
    const { store } = this.options;
    const instance = await store.instances.findById(id);
    if (instance && (await store.accounts.findById(instance.accountId))?.disabledAt) {
      await this.options.host.deactivate(id, 'disabled');
      this.options.log.info({ instanceId: id }, 'stopped: its account is disabled');
      return;
    }
    if (this.#clock.now() - actor.lastActivity > this.options.idleMs && actor.queueLength === 0) {
      await this.options.host.deactivate(id, instance ? 'idle' : 'deleted');
    }
  }

  /** A pass at `lapseMs` (when a departed node's first lease lapses), and at least every FAST_POLL_MS until then. */
  #soon(lapseMs?: number): void {
    if (!this.#timer) return;
    const delay = Math.max(1, Math.min(FAST_POLL_MS, this.options.intervalMs, lapseMs ?? Infinity));
    const now = this.#clock.now();
    if (this.#fastPoll && this.#fastPollAt <= now + delay) return;
    this.#fastPoll?.();
    this.#fastPollAt = now + delay;
    this.#fastPoll = this.#clock.after(delay, () => {
      this.#fastPoll = undefined;
      this.kick();
    });
  }

  #takeMove(): boolean {
    const now = this.#clock.now();
    this.#moves = this.#moves.filter((t) => now - t < this.options.moveWindowMs);
    if (this.#moves.length >= this.options.movesPerWindow) return false;
    this.#moves.push(now);
    return true;
  }
}
