import { setImmediate as yieldToLoop } from 'node:timers/promises';
import type { Logger } from 'pino';
import { InstanceActor } from '../actors/instance-actor.js';
import type { ActorBehavior, ActorContext, StopReason } from '../actors/instance-actor.js';
import type { ActorMetrics } from '../metrics/metrics.js';
import type { OwnerHolder } from '../store/records.js';
import type { Store } from '../store/store.js';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';
import { PhaseTimer } from '../util/phase-timer.js';
import { LeaseHolder } from './lease-holder.js';
import type { LeaseHolderState } from './lease-holder.js';
import { nodeResource } from './lease-manager.js';
import type { HolderState, LeaseManager } from './lease-manager.js';
import type { OwnerDirectory } from './owner-directory.js';

/** An activation batch at least this big logs where its time went. */
const BIG_BATCH = 100;

export interface ActorHostOptions<S = ActorContext> {
  nodeId: string;
  store: Store;
  leases: LeaseManager;
  directory: OwnerDirectory;
  behavior: (instanceId: string) => ActorBehavior<S>;
  log: Logger;
  /** @default 1000 */
  maxQueue: number;
  /** Stop side effects this long before the node lease may expire. @default 250 */
  safetyMarginMs: number;
  /** Longest wait for queued calls when an actor hands off. @default 10000 */
  drainTimeoutMs: number;
  /** Actors started at once by one activation batch. @default 32 */
  activationConcurrency?: number;
  metrics?: ActorMetrics;
  /** The node lease, releases and every actor's deadlines run on it. @default systemClock */
  clock?: Clock;
}

/** An actor as the router and the reconciler use it, whatever its behaviour's scope. */
export type HostedActor = Pick<InstanceActor, 'state' | 'epoch' | 'queueLength' | 'lastActivity' | 'call'>;

/** Instances another node still holds, and when to look again (the reconciler's fast poll). */
export interface ActivationReport {
  /** Held by a node whose lease is alive: its node id, and how long until the lease lapses unless renewed. */
  busy: { instanceId: string; node: string; expiresInMs: number }[];
  /** Some holder could not be judged yet (a young Redis incarnation, Redis away): ask again after this. */
  retryInMs?: number;
}

/** The actors of a node as the router and the reconciler see them. */
export interface HostedActors {
  readonly size: number;
  /** Moves whenever an actor is added or removed: a reconcile pass that saw the same one need not walk again. */
  readonly generation: number;
  ids(): string[];
  get(instanceId: string): HostedActor | undefined;
  activate(instanceId: string): Promise<HostedActor | undefined>;
  activateMany(instanceIds: string[]): Promise<ActivationReport>;
  deactivate(instanceId: string, reason: StopReason): Promise<void>;
}

/** Lifecycle events of the host, for metrics and tests. */
export interface ActorHostListener {
  activated(instanceId: string, epoch: number): void;
  stopped(instanceId: string, reason: StopReason): void;
}

/**
 * The actors this node owns, all under one node lease (`node:<nodeId>`): idle ownership costs Redis one
 * renewal per node, whatever the number of instances. Taking an instance reads its holder from the store;
 * a holder other than this node must be surely gone (its node lease lapsed or released, judged by the
 * lease manager, which waits out a restarted Redis), then a compare-and-set on the epoch makes this node
 * the holder and fences every earlier owner's writes. Losing the node lease stops every actor before it
 * may have expired; letting an instance go clears the holder, so the next node takes it at once.
 */
export class ActorHost<S = ActorContext> implements HostedActors {
  readonly #actors = new Map<string, InstanceActor<S>>();
  readonly #activating = new Map<string, Promise<InstanceActor<S> | undefined>>();
  readonly #listeners: Partial<ActorHostListener>[] = [];
  /** Instances let go whose holder the store could not clear yet (epoch to clear it under). */
  readonly #unreleased = new Map<string, number>();
  readonly #lease: LeaseHolder;
  readonly #clock: Clock;
  #releaseTimer: Cancel | undefined;
  #closed = false;
  #generation = 0;

  constructor(private readonly options: ActorHostOptions<S>) {
    this.#clock = options.clock ?? systemClock;
    this.#lease = new LeaseHolder({
      resource: nodeResource(options.nodeId),
      leases: options.leases,
      log: options.log,
      clock: this.#clock,
      fresh: true,
      safetyMarginMs: options.safetyMarginMs,
      onAcquired: () => this.#heartbeat(),
      onLost: () => {
        for (const actor of [...this.#actors.values()]) actor.selfStop('lease-lost');
      },
      onReasserted: () => {
        options.directory
          .record(this.ids(), options.nodeId)
          .catch((err: unknown) => options.log.warn({ err }, 'could not write the owner hints again'));
      },
      onRenewal: (seconds, outcome) => {
        if (outcome === 'renewed') this.#heartbeat();
        if (outcome === 'undecided') options.metrics?.leaseRenewalFailed();
        else options.metrics?.leaseRenewal(seconds, outcome === 'lost' ? this.#actors.size : 0);
      },
    });
  }

  /** Takes the node lease (resolves after the first attempt) and keeps it. */
  async start(): Promise<void> {
    await this.#lease.start();
    this.#releaseTimer = this.#clock.every(Math.max(50, Math.floor(this.options.leases.ttlMs / 3)), () => {
      void this.#retryReleases();
    });
  }

  on(listener: Partial<ActorHostListener>): void {
    this.#listeners.push(listener);
  }

  /** The node lease's lifecycle state (health, tests). */
  get leaseState(): LeaseHolderState {
    return this.#lease.state;
  }

  get size(): number {
    return this.#actors.size;
  }

  get generation(): number {
    return this.#generation;
  }

  ids(): string[] {
    return [...this.#actors.keys()];
  }

  /** Calls queued or running in this node's actors: the sum, and the longest mailbox (metrics). */
  mailboxes(): { total: number; max: number } {
    let total = 0;
    let max = 0;
    for (const actor of this.#actors.values()) {
      const n = actor.queueLength;
      total += n;
      if (n > max) max = n;
    }
    return { total, max };
  }

  /** The actor of an instance owned here and accepting calls (until it has stopped), if any. */
  get(instanceId: string): InstanceActor<S> | undefined {
    const actor = this.#actors.get(instanceId);
    return actor && actor.state !== 'stopped' ? actor : undefined;
  }

  /**
   * Activates the instance here unless another node holds it; single-flight per instance. An activation
   * under way that comes back empty is followed by a look of its own: it may have read the holder before a
   * release that this call was made for (a handoff's hint during a reconcile pass of thousands).
   */
  async activate(instanceId: string): Promise<InstanceActor<S> | undefined> {
    const existing = this.get(instanceId);
    if (existing) return existing;
    const pending = this.#activating.get(instanceId);
    if (pending && (await pending)) return pending;
    await this.activateMany([instanceId]);
    return this.get(instanceId);
  }

  /**
   * Takes every instance of `instanceIds` that nobody else holds, in one store batch, and starts their
   * actors (a few at a time); reports the ones still held elsewhere.
   */
  async activateMany(instanceIds: string[]): Promise<ActivationReport> {
    // Activations already under way are waited for, not started twice.
    const underway = instanceIds.flatMap((id) => this.#activating.get(id) ?? []);
    const wanted = instanceIds.filter((id) => !this.get(id) && !this.#activating.has(id));
    const report: ActivationReport = { busy: [] };
    if (wanted.length === 0 || this.#closed) {
      await Promise.all(underway);
      return report;
    }
    const batch = this.#activateBatch(wanted, report);
    const started = new Map<string, Promise<InstanceActor<S> | undefined>>();
    for (const id of wanted) {
      // Its waiters see "not activated"; the batch's own caller sees the error.
      const one = batch
        .then(
          (actors) => actors.get(id),
          () => undefined,
        )
        .finally(() => {
          if (this.#activating.get(id) === one) this.#activating.delete(id);
        });
      started.set(id, one);
      this.#activating.set(id, one);
    }
    await batch;
    await Promise.all([...started.values(), ...underway]);
    return report;
  }

  async #activateBatch(ids: string[], report: ActivationReport): Promise<Map<string, InstanceActor<S> | undefined>> {
    const out = new Map<string, InstanceActor<S> | undefined>();
    const lease = this.#lease.lease;
    if (!lease || !this.#lease.valid()) return out;
    const me: OwnerHolder = { node: this.options.nodeId, token: lease.token };
    const phases = new PhaseTimer(this.#clock);
    const owned = await this.options.store.instances.ownership(ids);
    phases.mark('read');
    const judged = new Map<string, Promise<HolderState>>();
    const claims: { id: string; epoch: number }[] = [];
    const takeovers: { id: string; epoch: number; holder: OwnerHolder }[] = [];
    for (const id of ids) {
      const o = owned.get(id);
      if (!o) continue; // deleted
      const h = o.holder;
      if (!h || (h.node === me.node && h.token === me.token)) {
        claims.push({ id, epoch: o.epoch });
        continue;
      }
      // One question per holder, however many of its instances this batch wants.
      const key = `${h.node}\u0000${h.token}`;
      let state = judged.get(key);
      if (!state) judged.set(key, (state = this.options.leases.holderState(nodeResource(h.node), h.token)));
      const s = await state;
      if (s.kind === 'gone') takeovers.push({ id, epoch: o.epoch, holder: h });
      else if (s.kind === 'alive') report.busy.push({ instanceId: id, node: h.node, expiresInMs: s.expiresInMs });
      else report.retryInMs = Math.min(report.retryInMs ?? Infinity, s.retryInMs);
    }
    claims.push(...(await this.#heardFrom(takeovers, report)));
    phases.mark('judge');
    if (claims.length === 0) return out;
    const taken = await this.options.store.instances.claimFrom(claims, me);
    phases.mark('claim');
    // A claim slower than the lease (a paused process, a slow store): another node may own them by now.
    if (!this.#lease.valid() || this.#lease.lease?.token !== lease.token) {
      this.options.log.warn({ instances: taken.size }, 'claims outlasted the node lease; not activating');
      await Promise.all(
        [...taken].map(([id, epoch]) => this.options.store.instances.release(id, epoch).catch(() => undefined)),
      );
      return out;
    }
    await this.options.directory
      .record([...taken.keys()], me.node)
      .catch((err: unknown) => this.options.log.warn({ err }, 'could not write owner hints'));
    phases.mark('hints');
    const queue = [...taken];
    const worker = async () => {
      for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
        // A turn of the event loop first: on a synchronous store (SQLite) a batch of activations is one chain
        // of microtasks, and 1,000 of them starved the lease renewal's timer until the lease was lost.
        await yieldToLoop();
        out.set(next[0], await this.#start(next[0], next[1], lease.token));
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.options.activationConcurrency ?? 32, queue.length) }, worker));
    phases.mark('start');
    // A big batch (a failover, a restart) says where its time went: the figure an operator sizes a node by.
    if (taken.size >= BIG_BATCH) {
      this.options.log.info({ wanted: ids.length, claimed: taken.size, ms: phases.all() }, 'activated a batch');
    }
    return out;
  }

  /**
   * The takeovers whose holder the store has not heard from within a TTL. Redis calls their leases gone,
   * but two Redis masters at once (a restarted primary that the sentinels have not demoted yet) each call
   * the other side's nodes gone while they still act: the store, one for every node, is the second witness.
   * A holder still heard from is waited for, as one whose Redis cannot tell yet.
   */
  async #heardFrom(
    takeovers: { id: string; epoch: number; holder: OwnerHolder }[],
    report: ActivationReport,
  ): Promise<{ id: string; epoch: number }[]> {
    if (takeovers.length === 0) return [];
    const ttlMs = this.options.leases.ttlMs;
    const beats = await this.options.store.instances.heartbeats([...new Set(takeovers.map((t) => t.holder.node))]);
    const claims: { id: string; epoch: number }[] = [];
    const waited = new Map<string, { instances: number; heardMsAgo: number }>();
    for (const { id, epoch, holder } of takeovers) {
      const beat = beats.get(holder.node);
      if (beat?.token === holder.token && beat.ageMs < ttlMs) {
        waited.set(holder.node, { instances: (waited.get(holder.node)?.instances ?? 0) + 1, heardMsAgo: beat.ageMs });
        report.retryInMs = Math.min(report.retryInMs ?? Infinity, ttlMs - beat.ageMs);
      } else claims.push({ id, epoch });
    }
    for (const [holder, seen] of waited) {
      this.options.log.warn(
        { holder, ...seen },
        'Redis calls the holder gone but the store heard from it within a TTL; waiting',
      );
    }
    return claims;
  }

  /** Tells the store this node lives under its current lease (the second witness `#heardFrom` reads). */
  #heartbeat(): void {
    const lease = this.#lease.lease;
    if (!lease) return;
    this.options.store.instances
      .heartbeat({ node: this.options.nodeId, token: lease.token })
      .catch((err: unknown) => this.options.log.debug({ err }, 'could not write the node heartbeat'));
  }

  async #start(instanceId: string, epoch: number, token: string): Promise<InstanceActor<S> | undefined> {
    const holder = this.#lease;
    const actor: InstanceActor<S> = new InstanceActor({
      instanceId,
      nodeId: this.options.nodeId,
      epoch,
      store: this.options.store,
      behavior: this.options.behavior(instanceId),
      log: this.options.log.child({ instanceId, epoch }),
      // Valid only under the node lease it was taken with: a lease taken again later is not this one.
      leaseValidUntil: () => (holder.lease?.token === token ? holder.validUntil : Number.NEGATIVE_INFINITY),
      clock: this.#clock,
      safetyMarginMs: this.options.safetyMarginMs,
      maxQueue: this.options.maxQueue,
      onSelfStop: (reason) => void this.#forget(instanceId, actor, reason),
    });
    this.#actors.set(instanceId, actor);
    this.#generation++;
    try {
      await actor.activate();
    } catch (err) {
      this.options.log.error({ err, instanceId }, 'activation failed');
      await this.#forget(instanceId, actor, 'activation-failed');
      return undefined;
    }
    if (actor.state !== 'active') return undefined;
    this.options.log.debug({ instanceId, epoch }, 'actor activated');
    this.options.metrics?.activated();
    for (const l of this.#listeners) l.activated?.(instanceId, epoch);
    return actor;
  }

  /** Drains, stops and lets one actor go (handoff, shutdown, deletion, idleness). */
  async deactivate(instanceId: string, reason: StopReason): Promise<void> {
    const actor = this.#actors.get(instanceId);
    if (!actor) return;
    await actor.drain(this.options.drainTimeoutMs);
    await this.#forget(instanceId, actor, reason);
  }

  async #forget(instanceId: string, actor: InstanceActor<S>, reason: StopReason): Promise<void> {
    if (this.#actors.get(instanceId) !== actor) return;
    this.#actors.delete(instanceId);
    this.#generation++;
    await actor.stop(reason);
    // Lost or fenced: someone else's now, nothing to let go.
    if (reason !== 'lease-lost' && reason !== 'fenced') await this.#release(instanceId, actor.epoch);
    this.options.metrics?.stopped(reason);
    for (const l of this.#listeners) l.stopped?.(instanceId, reason);
  }

  /** Clears this node as the holder, so the next owner need not wait for the node lease to lapse. */
  async #release(instanceId: string, epoch: number): Promise<void> {
    try {
      await this.options.store.instances.release(instanceId, epoch);
      this.#unreleased.delete(instanceId);
    } catch (err) {
      this.options.log.warn({ err, instanceId }, 'could not let the instance go in the store; retrying');
      this.#unreleased.set(instanceId, epoch);
    }
    await this.options.directory.forget(instanceId, this.options.nodeId).catch(() => undefined);
  }

  async #retryReleases(): Promise<void> {
    for (const [id, epoch] of [...this.#unreleased]) {
      if (this.#actors.has(id)) this.#unreleased.delete(id);
      else await this.#release(id, epoch);
    }
  }

  /** Hands every actor off (shutdown): drain, stop, let go, at most `concurrency` at a time; then the node lease. */
  async stopAll(reason: StopReason, concurrency = 64): Promise<void> {
    this.#closed = true;
    const ids = this.ids();
    const worker = async () => {
      for (let id = ids.shift(); id !== undefined; id = ids.shift()) await this.deactivate(id, reason);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
    await this.#retryReleases();
    this.#releaseTimer?.();
    // Renewed until the last actor is gone: a long drain must not let the lease lapse mid-handoff.
    const lease = this.#lease.lease;
    await this.#lease.stop();
    if (lease) {
      await this.options.store.instances
        .endHeartbeat({ node: this.options.nodeId, token: lease.token })
        .catch((err: unknown) => this.options.log.debug({ err }, 'could not end the node heartbeat'));
    }
  }
}
