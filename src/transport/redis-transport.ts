import { once } from 'node:events';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { isCluster, subscriberFor } from '../redis/redis-client.js';
import type { RedisClient } from '../redis/redis-client.js';
import type { Transport } from './transport.js';

/**
 * Pub/sub over Redis: one connection publishes, another subscribes (a subscriber cannot publish). On a
 * Redis Cluster the pub/sub is sharded (SPUBLISH/SSUBSCRIBE): a message goes to the master of its
 * channel's slot only, instead of over the cluster bus to every node, so fan-out scales with the masters.
 */
export class RedisTransport implements Transport {
  readonly #sub: RedisClient;
  readonly #sharded: boolean;
  readonly #handlers = new Map<string, Set<(message: string) => void>>();
  /** The publisher's socket while it collects this turn's publishes (see publish). */
  #corked: Redis['stream'] | undefined;

  constructor(
    private readonly pub: RedisClient,
    private readonly logger: Logger,
  ) {
    this.#sharded = isCluster(pub);
    this.#sub = subscriberFor(pub);
    this.#sub.on('error', (err) => this.logger.debug({ err }, 'redis subscriber error'));
    this.#sub.on(this.#sharded ? 'smessage' : 'message', (channel: string, message: string) => {
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
    // A cluster client writes to a socket per master: there is no one socket to cork.
    if (isCluster(this.pub)) return this.pub.spublish(channel, message) as Promise<number>;
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
      await this.#listen(channel);
    }
    set.add(handler);
    return async () => {
      const current = this.#handlers.get(channel);
      if (current?.size === 1 && current.has(handler)) {
        // The handler stays until Redis confirms: messages published before the UNSUBSCRIBE still arrive
        // ahead of its reply, and dropping them would leave a routed call waiting for its deadline.
        await (this.#sharded ? this.#sub.sunsubscribe(channel) : this.#sub.unsubscribe(channel)).catch(() => undefined);
        current.delete(handler);
        // Read again after the await (TypeScript kept the size narrowed from before it).
        if ((current as Set<unknown>).size < 1) this.#handlers.delete(channel);
        // Someone subscribed to the channel meanwhile: it must keep receiving.
        else await this.#listen(channel).catch(() => undefined);
        return;
      }
      current?.delete(handler);
    };
  }

  async #listen(channel: string): Promise<void> {
    await (this.#sharded ? this.#sub.ssubscribe(channel) : this.#sub.subscribe(channel));
  }

  async close(): Promise<void> {
    this.#uncork();
    this.#handlers.clear();
    this.#sub.disconnect();
  }
}
