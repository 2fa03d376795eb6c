import { once } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import type { Transport } from './transport.js';

/** Pub/sub over Redis: one connection publishes, a duplicate subscribes (a subscriber cannot publish). */
export class RedisTransport implements Transport {
  readonly #sub: Redis;
  readonly #handlers = new Map<string, Set<(message: string) => void>>();
  /** The publisher's socket while it collects this turn's publishes (see publish). */
  #corked: Redis['stream'] | undefined;

  constructor(
    private readonly pub: Redis,
    private readonly logger: Logger,
  ) {
    // Subscriptions may wait for a (re)connection: ioredis re-subscribes them after a Redis restart.
    this.#sub = pub.duplicate({ lazyConnect: false, enableOfflineQueue: true, maxRetriesPerRequest: null });
    this.#sub.on('error', (err) => this.logger.debug({ err }, 'redis subscriber error'));
    this.#sub.on('message', (channel: string, message: string) => {
      for (const h of this.#handlers.get(channel) ?? []) {
        try {
          h(message);
        } catch (err) {
          this.logger.error({ err, channel }, 'message handler failed');
        }
      }
    });
  }

  /**
   * Publishes issued in one turn of the event loop leave in one write: the socket is corked at the first
   * and uncorked after the poll phase (setImmediate), which adds no wait and saves a syscall per message.
   */
  publish(channel: string, message: string): Promise<number> {
    if (this.#corked === undefined && this.pub.status === 'ready') {
      this.#corked = this.pub.stream;
      this.#corked.cork();
      setImmediate(this.#uncork);
    }
    return this.pub.publish(channel, message);
  }

  readonly #uncork = (): void => {
    const stream = this.#corked;
    this.#corked = undefined;
    stream?.uncork();
  };

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    let set = this.#handlers.get(channel);
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      // A SUBSCRIBE sent before the connection is ready switches it to subscriber mode mid-handshake;
      // ioredis then drops the connection and the subscription is lost for good.
      if (this.#sub.status !== 'ready') await once(this.#sub, 'ready');
      await this.#sub.subscribe(channel);
    }
    set.add(handler);
    return async () => {
      const current = this.#handlers.get(channel);
      if (current?.size === 1 && current.has(handler)) {
        // The handler stays until Redis confirms: messages published before the UNSUBSCRIBE still arrive
        // ahead of its reply, and dropping them would leave a routed call waiting for its deadline.
        await this.#sub.unsubscribe(channel).catch(() => undefined);
        current.delete(handler);
        // Read again after the await (TypeScript kept the size narrowed from before it).
        if ((current as Set<unknown>).size < 1) this.#handlers.delete(channel);
        // Someone subscribed to the channel meanwhile: it must keep receiving.
        else await this.#sub.subscribe(channel).catch(() => undefined);
        return;
      }
      current?.delete(handler);
    };
  }

  async close(): Promise<void> {
    this.#uncork();
    this.#handlers.clear();
    this.#sub.disconnect();
  }
}
