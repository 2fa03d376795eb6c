import type { Logger } from 'pino';
import type { BrokerStatus } from './broker-publisher.js';

/** How often a publisher that is down tries to connect again on its own. */
const KEEPER_MS = 5000;

/**
 * A broker publisher's health, shared by the transports: the status `/health` shows, one log line per
 * change, and the keeper that connects again every few seconds while down (so the status is true even
 * without events to publish).
 */
export class BrokerHealth {
  #status: BrokerStatus = { up: false, since: new Date().toISOString(), error: 'not connected yet' };
  #keeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly transport: string,
    private readonly log: Logger,
    /** A new error while down counts as a change (else only up and down do: a client that reports each failed publish). */
    private readonly trackError: boolean,
  ) {}

  get status(): BrokerStatus {
    return this.#status;
  }

  set(up: boolean, error?: string): void {
    if (this.#status.up === up && (!this.trackError || this.#status.error === error)) return;
    this.#status = { up, since: new Date().toISOString(), ...(error !== undefined ? { error } : {}) };
    if (up) this.log.info({ broker: this.transport }, 'broker connected');
    else this.log.warn({ broker: this.transport, error }, 'broker unavailable; events are held in the queue');
  }

  /** Connects now, and again every few seconds while down. */
  keep(connect: () => void): void {
    connect();
    this.#keeper = setInterval(() => {
      if (!this.#status.up) connect();
    }, KEEPER_MS).unref();
  }

  stop(): void {
    clearInterval(this.#keeper);
  }
}
