import type { Logger } from 'pino';
import type { Transport } from '../transport/transport.js';

/**
 * A fact told to every node at once over one transport channel (Redis pub/sub in cluster mode). Fire and
 * forget: every listener has its own bound (a period, a TTL) on how long a lost message can delay it.
 */
export class BusNews<T> {
  constructor(
    private readonly transport: Transport,
    private readonly channel: string,
    private readonly log: Logger,
    /** What one message tells, for the log lines. */
    private readonly what: string,
  ) {}

  async publish(news: T): Promise<void> {
    await this.transport.publish(this.channel, JSON.stringify(news)).catch((err: unknown) => {
      this.log.warn({ err, news }, `${this.what} not announced; nodes will see it on their next check`);
    });
  }

  /** Resolves once the subscription is live; returns the unsubscribe function. */
  subscribe(handler: (news: T) => void): Promise<() => Promise<void>> {
    return this.transport.subscribe(this.channel, (raw) => {
      try {
        handler(JSON.parse(raw) as T);
      } catch (err) {
        this.log.warn({ err }, `dropped a malformed ${this.what}`);
      }
    });
  }
}
