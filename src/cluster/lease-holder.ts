import type { Logger } from 'pino';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';
import type { Lease, LeaseManager, RenewOutcome } from './lease-manager.js';

/**
 * The lifecycle of one held lease:
 * - `idle`: not started.
 * - `acquiring`: trying to take it, once a period (TTL/3), until it does.
 * - `held`: taken, and renewed once a period; each renewal moves `validUntil` on.
 * - `undecided`: the last renewal had no majority either way (Redis unreachable). Still valid until
 *   `validUntil` and retried every TTL/10, so a short Redis blip stops nothing; back to `held` on a
 *   renewal, `lost` on a refusal or once the validity (less the safety margin) runs out.
 * - `lost`: not ours any more; `onLost` has run. Back to `acquiring` at the next period when `reacquire`.
 * - `released`: stopped and given up; final.
 */
export type LeaseHolderState = 'idle' | 'acquiring' | 'held' | 'undecided' | 'lost' | 'released';

export interface LeaseHolderOptions {
  resource: string;
  leases: LeaseManager;
  log: Logger;
  /** Renewals, retries and the expiry watch run on it; `validUntil` is a time of it. @default systemClock */
  clock?: Clock;
  /** A resource nobody can have held before (a node's own): no wait for a young Redis incarnation. */
  fresh?: boolean;
  /** The lease counts as lost this long before it may expire: side effects stop first. @default 0 */
  safetyMarginMs?: number;
  /** Take the lease again after a loss. @default true */
  reacquire?: boolean;
  /** Runs when the lease is taken (again). */
  onAcquired?: (lease: Lease) => void | Promise<void>;
  /** Runs once per loss, before the lease can be taken again. */
  onLost?: (why: string) => void | Promise<void>;
  /** A renewal wrote the lease again into a restarted Redis: what was kept beside it there is gone too. */
  onReasserted?: () => void;
  /** Each renewal's duration and outcome (metrics). */
  onRenewal?: (seconds: number, outcome: RenewOutcome['kind']) => void;
}

/**
 * Holds one lease for as long as it can, with one set of rules for every holder (a node's own lease,
 * under which it owns its instances, and each singleton role's): when to renew, what an undecided
 * renewal means, and when to give up. The rules are those of `LeaseManager`; this class only runs them.
 */
export class LeaseHolder {
  #state: LeaseHolderState = 'idle';
  #lease: Lease | undefined;
  #tick: Cancel | undefined;
  #retry: Cancel | undefined;
  #expiry: Cancel | undefined;
  #busy: Promise<void> | undefined;
  #stopping = false;
  readonly #clock: Clock;

  constructor(private readonly options: LeaseHolderOptions) {
    this.#clock = options.clock ?? systemClock;
  }

  get state(): LeaseHolderState {
    return this.#state;
  }

  /** The lease while it is held (valid or not yet known to be lost). */
  get lease(): Lease | undefined {
    return this.#lease;
  }

  /** The time of `clock` until which the lease is surely ours; -Infinity when not held. */
  get validUntil(): number {
    return this.#lease && (this.#state === 'held' || this.#state === 'undecided')
      ? this.#lease.validUntil
      : Number.NEGATIVE_INFINITY;
  }

  /** True while the lease is surely ours, the safety margin kept. */
  valid(): boolean {
    return this.#clock.now() < this.validUntil - (this.options.safetyMarginMs ?? 0);
  }

  get #periodMs(): number {
    return Math.max(50, Math.floor(this.options.leases.ttlMs / 3));
  }

  /** Starts holding; resolves after the first attempt to take the lease (taken or not). */
  async start(): Promise<void> {
    if (this.#state !== 'idle') return;
    this.#state = 'acquiring';
    this.#tick = this.#clock.every(this.#periodMs, () => void this.#step());
    await this.#step();
  }

  /** One attempt now, unless one runs (then that one); used by ticks and by callers in a hurry. */
  #step(): Promise<void> {
    this.#busy ??= this.#run().finally(() => {
      this.#busy = undefined;
    });
    return this.#busy;
  }

  async #run(): Promise<void> {
    try {
      if (this.#state === 'acquiring') await this.#acquire();
      else if (this.#state === 'held' || this.#state === 'undecided') await this.#renew();
      else if (this.#state === 'lost' && this.options.reacquire !== false) {
        this.#state = 'acquiring';
        await this.#acquire();
      }
    } catch (err) {
      this.options.log.warn({ err, resource: this.options.resource }, 'lease step failed');
    }
  }

  async #acquire(): Promise<void> {
    const lease = await this.options.leases
      .acquire(this.options.resource, { fresh: this.options.fresh ?? false })
      .catch(() => undefined);
    if (!lease) return;
    // stop() ran while the acquire was in flight: never keep a lease nobody will renew.
    if (this.#state !== 'acquiring' || this.#stopping) {
      await this.options.leases.release(lease).catch(() => undefined);
      return;
    }
    this.#lease = lease;
    this.#state = 'held';
    this.#watchExpiry();
    this.options.log.info({ resource: this.options.resource }, 'lease taken');
    await this.options.onAcquired?.(lease);
  }

  async #renew(): Promise<void> {
    const lease = this.#lease;
    if (!lease) return;
    const started = this.#clock.now();
    const outcome = await this.options.leases.renew(lease);
    this.options.onRenewal?.((this.#clock.now() - started) / 1000, outcome.kind);
    if (this.#lease !== lease || (this.#state !== 'held' && this.#state !== 'undecided')) return;
    if (outcome.kind === 'renewed') {
      lease.validUntil = outcome.validUntil;
      this.#state = 'held';
      this.#cancelRetry();
      this.#watchExpiry();
      if (outcome.reasserted) {
        this.options.log.warn({ resource: this.options.resource }, 'lease written again into a restarted Redis');
        this.options.onReasserted?.();
      }
    } else if (outcome.kind === 'lost') {
      await this.#lose('renewal refused');
    } else {
      this.#state = 'undecided';
      this.options.log.warn(
        { resource: this.options.resource },
        'lease renewal undecided; retrying within its validity',
      );
      this.#retrySoon();
    }
  }

  /** The next try of an undecided renewal, well inside the remaining validity (TTL/10, at least 50 ms). */
  #retrySoon(): void {
    if (this.#retry) return;
    this.#retry = this.#clock.after(Math.max(50, Math.floor(this.options.leases.ttlMs / 10)), () => {
      this.#retry = undefined;
      void this.#step();
    });
  }

  #cancelRetry(): void {
    this.#retry?.();
    this.#retry = undefined;
  }

  /** Timers can be late (a busy loop, a paused process): this one ends the lease when its validity does. */
  #watchExpiry(): void {
    this.#expiry?.();
    const lease = this.#lease;
    if (!lease) return;
    const at = lease.validUntil - (this.options.safetyMarginMs ?? 0);
    this.#expiry = this.#clock.after(Math.max(0, at - this.#clock.now()), () => {
      this.#expiry = undefined;
      if (this.#lease !== lease) return;
      // A timer may fire a fraction of a millisecond early on the monotonic clock: look again then.
      if (this.valid()) this.#watchExpiry();
      else void this.#lose('validity ran out');
    });
  }

  async #lose(why: string): Promise<void> {
    if (this.#state !== 'held' && this.#state !== 'undecided') return;
    this.#state = 'lost';
    this.#lease = undefined;
    this.#expiry?.();
    this.#expiry = undefined;
    this.#cancelRetry();
    this.options.log.warn({ resource: this.options.resource, why }, 'lease lost');
    await this.options.onLost?.(why);
  }

  /** Stops holding and gives the lease up; `before` runs once no attempt is under way, while it is still held. */
  async stop(before?: () => Promise<void>): Promise<void> {
    if (this.#state === 'released' || this.#stopping) return;
    this.#stopping = true;
    this.#tick?.();
    this.#cancelRetry();
    await this.#busy;
    await before?.();
    this.#expiry?.();
    const lease = this.#lease;
    this.#state = 'released';
    this.#lease = undefined;
    if (lease) await this.options.leases.release(lease).catch(() => undefined);
  }
}
