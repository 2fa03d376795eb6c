import type { Logger } from 'pino';
import { FencedError } from '../errors.js';
import { InstanceActor } from '../actors/instance-actor.js';
import type { ActorBehavior, StopReason } from '../actors/instance-actor.js';
import type { ActorMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import type { Lease, LeaseManager } from './lease-manager.js';

export interface ActorHostOptions {
  nodeId: string;
  store: Store;
  leases: LeaseManager;
  behavior: (instanceId: string) => ActorBehavior;
  log: Logger;
  /** @default 1000 */
  maxQueue: number;
  /** Stop side effects this long before a lease may expire. @default 250 */
  safetyMarginMs: number;
  /** Longest wait for queued calls when an actor hands off. @default 10000 */
  drainTimeoutMs: number;
  metrics?: ActorMetrics;
}

/** Lifecycle events of the host, for metrics and tests. */
export interface ActorHostListener {
  activated(instanceId: string, epoch: number): void;
  stopped(instanceId: string, reason: StopReason): void;
}

/**
 * The actors this node owns. Activation takes the lease, then claims the instance's epoch in the store
 * (so that every earlier owner's writes are refused from then on). Leases are renewed in batches at
 * TTL/3; a lease that is not renewed, or that runs out on the monotonic clock, stops its actor before
 * it may have expired.
 */
export class ActorHost {
  readonly #actors = new Map<string, { actor: InstanceActor; lease: Lease }>();
  readonly #activating = new Map<string, Promise<InstanceActor | undefined>>();
  readonly #listeners: Partial<ActorHostListener>[] = [];
  #renewTimer: NodeJS.Timeout | undefined;
  #retryTimer: NodeJS.Timeout | undefined;
  #watchdog: NodeJS.Timeout | undefined;
  #renewing = false;
  #closed = false;

  constructor(private readonly options: ActorHostOptions) {}

  start(): void {
    this.#renewTimer = setInterval(
      () => void this.#renewAll(),
      Math.max(50, Math.floor(this.options.leases.ttlMs / 3)),
    );
    // Timers can be late (a busy loop, a paused process): this check and the one before every turn and
    // write make sure that no side effect happens on an expired lease.
    this.#watchdog = setInterval(() => this.#expireLapsed(), 100);
  }

  on(listener: Partial<ActorHostListener>): void {
    this.#listeners.push(listener);
  }

  get size(): number {
    return this.#actors.size;
  }

  ids(): string[] {
    return [...this.#actors.keys()];
  }

  /** Calls queued or running in this node's actors: the sum, and the longest mailbox (metrics). */
  mailboxes(): { total: number; max: number } {
    let total = 0;
    let max = 0;
    for (const { actor } of this.#actors.values()) {
      const n = actor.queueLength;
      total += n;
      if (n > max) max = n;
    }
    return { total, max };
  }

  /** The actor of an instance owned here and accepting calls (until it has stopped), if any. */
  get(instanceId: string): InstanceActor | undefined {
    const entry = this.#actors.get(instanceId);
    return entry && entry.actor.state !== 'stopped' ? entry.actor : undefined;
  }

  /** Activates the instance here unless another node holds its lease; single-flight per instance. */
  activate(instanceId: string): Promise<InstanceActor | undefined> {
    const existing = this.get(instanceId);
    if (existing) return Promise.resolve(existing);
    if (this.#closed) return Promise.resolve(undefined);
    let pending = this.#activating.get(instanceId);
    if (!pending) {
      pending = this.#activate(instanceId).finally(() => this.#activating.delete(instanceId));
      this.#activating.set(instanceId, pending);
    }
    return pending;
  }

  async #activate(instanceId: string): Promise<InstanceActor | undefined> {
    const lease = await this.options.leases.acquire(instanceId);
    if (!lease) return undefined;
    let epoch: number;
    try {
      epoch = await this.options.store.instances.claim(instanceId);
    } catch (err) {
      await this.options.leases.release([lease]);
      if (err instanceof FencedError) return undefined; // the instance was deleted
      throw err;
    }
    // A claim slower than the lease (a paused process, a slow store): the lease may have lapsed and
    // another node may own the instance now. Nothing may run on it; the next placement round decides.
    if (performance.now() >= lease.validUntil - this.options.safetyMarginMs) {
      this.options.log.warn({ instanceId, epoch }, 'claim outlasted the lease; not activating');
      await this.options.leases.release([lease]).catch(() => undefined);
      return undefined;
    }
    const entry = { lease, actor: undefined as unknown as InstanceActor };
    const actor = new InstanceActor({
      instanceId,
      nodeId: this.options.nodeId,
      epoch,
      store: this.options.store,
      behavior: this.options.behavior(instanceId),
      log: this.options.log.child({ instanceId, epoch }),
      leaseValidUntil: () => entry.lease.validUntil,
      safetyMarginMs: this.options.safetyMarginMs,
      maxQueue: this.options.maxQueue,
      onSelfStop: (reason) => void this.#forget(instanceId, actor, reason, true),
    });
    entry.actor = actor;
    this.#actors.set(instanceId, entry);
    try {
      await actor.activate();
    } catch (err) {
      this.options.log.error({ err, instanceId }, 'activation failed');
      await this.#forget(instanceId, actor, 'activation-failed', true);
      return undefined;
    }
    if (actor.state !== 'active') return undefined;
    this.options.log.debug({ instanceId, epoch }, 'actor activated');
    this.options.metrics?.activated();
    for (const l of this.#listeners) l.activated?.(instanceId, epoch);
    return actor;
  }

  /** Drains, stops and releases one actor (handoff, shutdown, deletion, idleness). */
  async deactivate(instanceId: string, reason: StopReason): Promise<void> {
    const entry = this.#actors.get(instanceId);
    if (!entry) return;
    await entry.actor.drain(this.options.drainTimeoutMs);
    await this.#forget(instanceId, entry.actor, reason, true);
  }

  async #forget(instanceId: string, actor: InstanceActor, reason: StopReason, release: boolean): Promise<void> {
    const entry = this.#actors.get(instanceId);
    if (entry?.actor !== actor) return;
    this.#actors.delete(instanceId);
    await actor.stop(reason);
    // A lease lost or fenced is someone else's now: releasing it is harmless (token-checked) but useless.
    if (release && reason !== 'lease-lost' && reason !== 'fenced') {
      await this.options.leases
        .release([entry.lease])
        .catch((err: unknown) => this.options.log.warn({ err, instanceId }, 'lease release failed'));
    }
    this.options.metrics?.stopped(reason);
    for (const l of this.#listeners) l.stopped?.(instanceId, reason);
  }

  /**
   * One renewal round. A lease a majority refuses is lost and its actor stops at once; a lease the round
   * could not decide (a Redis error, a timeout) keeps running on its current validity and is retried soon,
   * so a sub-second Redis blip disconnects nobody. The watchdog stops whatever is not renewed in time.
   */
  async #renewAll(): Promise<void> {
    if (this.#renewing || this.#actors.size === 0) return;
    this.#renewing = true;
    let undecided = 0;
    try {
      const entries = [...this.#actors.values()];
      const started = performance.now();
      const { renewed, lost } = await this.options.leases.renew(entries.map((e) => e.lease));
      this.options.metrics?.leaseRenewal((performance.now() - started) / 1000, entries.length - renewed.length);
      const fresh = new Map(renewed.map((l) => [l.token, l]));
      const gone = new Set(lost.map((l) => l.token));
      for (const e of entries) {
        const lease = fresh.get(e.lease.token);
        if (lease) e.lease.validUntil = lease.validUntil;
        else if (gone.has(e.lease.token)) e.actor.selfStop('lease-lost');
        else undecided++;
      }
      if (undecided > 0) {
        this.options.metrics?.leaseRenewalFailed();
        this.options.log.warn({ undecided }, "lease renewal undecided; retrying within the leases' validity");
      }
    } finally {
      this.#renewing = false;
    }
    if (undecided > 0 && !this.#closed) this.#retrySoon();
  }

  /** The next try of an undecided round, well inside the remaining validity (TTL/10, at least 50 ms). */
  #retrySoon(): void {
    if (this.#retryTimer) return;
    this.#retryTimer = setTimeout(
      () => {
        this.#retryTimer = undefined;
        void this.#renewAll();
      },
      Math.max(50, Math.floor(this.options.leases.ttlMs / 10)),
    );
  }

  #expireLapsed(): void {
    for (const { actor } of this.#actors.values()) {
      if (!actor.leaseValid()) actor.selfStop('lease-lost');
    }
  }

  /** Hands every actor off (shutdown): drain, stop, release, at most `concurrency` at a time. */
  async stopAll(reason: StopReason, concurrency = 64): Promise<void> {
    this.#closed = true;
    const ids = this.ids();
    const worker = async () => {
      for (let id = ids.shift(); id !== undefined; id = ids.shift()) await this.deactivate(id, reason);
    };
    await Promise.all(Array.from({ length: Math.min(concurrency, ids.length) }, worker));
    // Renewal runs until the last actor is gone: a long drain must not let leases lapse mid-handoff.
    clearInterval(this.#renewTimer);
    clearTimeout(this.#retryTimer);
    clearInterval(this.#watchdog);
  }
}
