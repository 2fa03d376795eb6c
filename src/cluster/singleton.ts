import type { Logger } from 'pino';
import type { Clock } from '../util/clock.js';
import { LeaseHolder } from './lease-holder.js';
import type { LeaseManager } from './lease-manager.js';

/** A role held by exactly one node at a time (for example the billing cron actor). */
export interface SingletonRole {
  /** Starts the role's work; called when this node wins the lease. */
  start(): Promise<void> | void;
  /** Stops every side effect of the role; called before the lease may expire. */
  stop(): Promise<void> | void;
}

/**
 * Holds `singleton:<name>` with a `LeaseHolder`: the holder runs the role while its lease is valid and
 * stops it before the lease may expire; the others keep trying to take it. A Redis that restarted cannot
 * hand the role to a second node while the first may still run it (the lease manager waits it out).
 */
export class ClusterSingleton {
  readonly #holder: LeaseHolder;
  #running = false;

  constructor(
    readonly name: string,
    leases: LeaseManager,
    private readonly role: SingletonRole,
    private readonly log: Logger,
    clock?: Clock,
  ) {
    this.#holder = new LeaseHolder({
      resource: this.resource,
      leases,
      log,
      ...(clock ? { clock } : {}),
      // Stop the role a tick's worth before the lease may lapse: a side effect checks `holding` first.
      safetyMarginMs: Math.min(250, Math.floor(leases.ttlMs / 10)),
      onAcquired: async () => {
        this.log.info({ singleton: name }, 'singleton role acquired');
        this.#running = true;
        await this.role.start();
      },
      onLost: async (why) => {
        this.log.warn({ singleton: name, why }, 'singleton role lost');
        await this.#stopRole();
      },
    });
  }

  get resource(): string {
    return `singleton:${this.name}`;
  }

  /** True while this node surely holds the role (checked before every side effect of the role). */
  get holding(): boolean {
    return this.#holder.valid();
  }

  start(): void {
    void this.#holder.start();
  }

  async #stopRole(): Promise<void> {
    if (!this.#running) return;
    this.#running = false;
    try {
      await this.role.stop();
    } catch (err) {
      this.log.error({ err, singleton: this.name }, 'singleton role failed to stop');
    }
  }

  /** Stops the role, then gives the lease up so that another node takes it at once. */
  async stop(): Promise<void> {
    await this.#holder.stop(() => this.#stopRole());
  }
}
