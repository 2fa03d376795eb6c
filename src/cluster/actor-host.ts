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
  #watchdog: NodeJS.Timeout | undefined;
  #renewing = false;
  #closed = false;

  constructor(private readonly o: ActorHostOptions) {}

  start(): void {
    this.#renewTimer = setInterval(() => void this.#renewAll(), Math.max(50, Math.floor(this.o.leases.ttlMs / 3)));
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
    const lease = await this.o.leases.acquire(instanceId);
    if (!lease) return undefined;
    let epoch: number;
    try {
      epoch = await this.o.store.instances.claim(instanceId);
    } catch (err) {
      await this.o.leases.release([lease]);
      if (err instanceof FencedError) return undefined; // the instance was deleted
      throw err;
    }
    const entry = { lease, actor: undefined as unknown as InstanceActor };
    const actor = new InstanceActor({
      instanceId,
      nodeId: this.o.nodeId,
      epoch,
      store: this.o.store,
      behavior: this.o.behavior(instanceId),
      log: this.o.log.child({ instanceId, epoch }),
      leaseValidUntil: () => entry.lease.validUntil,
      safetyMarginMs: this.o.safetyMarginMs,
      maxQueue: this.o.maxQueue,
      onSelfStop: (reason) => void this.#forget(instanceId, actor, reason, true),
    });
    entry.actor = actor;
    this.#actors.set(instanceId, entry);
    try {
      await actor.activate();
    } catch (err) {
      this.o.log.error({ err, instanceId }, 'activation failed');
      await this.#forget(instanceId, actor, 'activation-failed', true);
      return undefined;
    }
    if (actor.state !== 'active') return undefined;
    this.o.log.debug({ instanceId, epoch }, 'actor activated');
    this.o.metrics?.activated();
    for (const l of this.#listeners) l.activated?.(instanceId, epoch);
    return actor;
  }

  /** Drains, stops and releases one actor (handoff, shutdown, deletion, idleness). */
  async deactivate(instanceId: string, reason: StopReason): Promise<void> {
    const entry = this.#actors.get(instanceId);
    if (!entry) return;
    await entry.actor.drain(this.o.drainTimeoutMs);
    await this.#forget(instanceId, entry.actor, reason, true);
  }

  async #forget(instanceId: string, actor: InstanceActor, reason: StopReason, release: boolean): Promise<void> {
    const entry = this.#actors.get(instanceId);
    if (entry?.actor !== actor) return;
    this.#actors.delete(instanceId);
    await actor.stop(reason);
    // A lease lost or fenced is someone else's now: releasing it is harmless (token-checked) but useless.
    if (release && reason !== 'lease-lost' && reason !== 'fenced') {
      await this.o.leases
        .release([entry.lease])
        .catch((err: unknown) => this.o.log.warn({ err, instanceId }, 'lease release failed'));
    }
    this.o.metrics?.stopped(reason);
    for (const l of this.#listeners) l.stopped?.(instanceId, reason);
  }

  async #renewAll(): Promise<void> {
    if (this.#renewing || this.#actors.size === 0) return;
    this.#renewing = true;
    try {
      const entries = [...this.#actors.values()];
      let renewed: Lease[];
      const started = performance.now();
      try {
        renewed = await this.o.leases.renew(entries.map((e) => e.lease));
      } catch (err) {
        this.o.metrics?.leaseRenewalFailed();
        this.o.log.warn({ err }, 'lease renewal failed; actors stop when their leases run out');
        return;
      }
      this.o.metrics?.leaseRenewal((performance.now() - started) / 1000, entries.length - renewed.length);
      const byToken = new Map(renewed.map((l) => [l.token, l]));
      for (const e of entries) {
        const fresh = byToken.get(e.lease.token);
        if (fresh) e.lease.validUntil = fresh.validUntil;
        else e.actor.selfStop('lease-lost');
      }
    } finally {
      this.#renewing = false;
    }
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
    clearInterval(this.#watchdog);
  }
}
