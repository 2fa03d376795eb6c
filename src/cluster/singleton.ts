import type { Logger } from 'pino';
import type { Lease, LeaseManager } from './lease-manager.js';

/** A role held by exactly one node at a time (for example the billing cron actor). */
export interface SingletonRole {
  /** Starts the role's work; called when this node wins the lease. */
  start(): Promise<void> | void;
  /** Stops every side effect of the role; called before the lease may expire. */
  stop(): Promise<void> | void;
}

/**
 * Holds `singleton:<name>` through the lease manager: every TTL/3 the holder renews, the others try
 * to acquire; a holder that fails to renew, or whose lease runs out on the monotonic clock, stops the
 * role first. Re-elected on failure within about one TTL.
 */
export class ClusterSingleton {
  #lease: Lease | undefined;
  #timer: NodeJS.Timeout | undefined;
  #busy = false;
  #stopped = false;

  constructor(
    readonly name: string,
    private readonly leases: LeaseManager,
    private readonly role: SingletonRole,
    private readonly log: Logger,
  ) {}

  get resource(): string {
    return `singleton:${this.name}`;
  }

  get #periodMs(): number {
    return Math.max(50, Math.floor(this.leases.ttlMs / 3));
  }

  get holding(): boolean {
    return this.#lease !== undefined && performance.now() < this.#lease.validUntil;
  }

  start(): void {
    this.#timer = setInterval(() => void this.#tick(), this.#periodMs);
    void this.#tick();
  }

  async #tick(): Promise<void> {
    if (this.#busy) return;
    this.#busy = true;
    try {
      if (this.#lease) {
        const { renewed, lost } = await this.leases.renew([this.#lease]);
        const fresh = renewed[0];
        if (fresh && performance.now() < fresh.validUntil) this.#lease = fresh;
        // Undecided (Redis unreachable): the role goes on while the lease will surely still be ours at the
        // next tick, and stops before that, since a tick is the only place where the role is stopped.
        else if (lost.length > 0 || this.#lease.validUntil - performance.now() < this.#periodMs + 50) {
          await this.#lose('renewal failed');
        }
      } else {
        const lease = await this.leases.acquire(this.resource).catch(() => undefined);
        if (lease && this.#stopped) {
          // stop() ran while this acquire was in flight: never start a role nobody will renew.
          await this.leases.release([lease]).catch(() => undefined);
        } else if (lease) {
          this.#lease = lease;
          this.log.info({ singleton: this.name }, 'singleton role acquired');
          await this.role.start();
        }
      }
    } catch (err) {
      this.log.error({ err, singleton: this.name }, 'singleton tick failed');
    } finally {
      this.#busy = false;
    }
    if (this.#lease && performance.now() >= this.#lease.validUntil) await this.#lose('lease ran out');
  }

  async #lose(why: string): Promise<void> {
    if (!this.#lease) return;
    this.#lease = undefined;
    this.log.warn({ singleton: this.name, why }, 'singleton role lost');
    await this.role.stop();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearInterval(this.#timer);
    const lease = this.#lease;
    if (lease) {
      this.#lease = undefined;
      await this.role.stop();
      await this.leases.release([lease]).catch(() => undefined);
    }
  }
}
