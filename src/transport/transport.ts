import { EventEmitter } from 'node:events';

/** Fire-and-forget messages between nodes (routing, membership news, event fan-out). */
export interface Transport {
  /** Resolves with how many subscribers received it (0 = nobody listens on that channel). */
  publish(channel: string, message: string): Promise<number>;
  /** Resolves once the subscription is live; returns the unsubscribe function. */
  subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
}

/** Embedded mode: channels inside this process. */
export class LocalTransport implements Transport {
  readonly #bus = new EventEmitter().setMaxListeners(0);

  async publish(channel: string, message: string): Promise<number> {
    // Asynchronous like Redis: a publisher never runs its subscribers inside its own call stack.
    queueMicrotask(() => this.#bus.emit(channel, message));
    return this.#bus.listenerCount(channel);
  }

  async subscribe(channel: string, handler: (message: string) => void): Promise<() => Promise<void>> {
    this.#bus.on(channel, handler);
    return async () => {
      this.#bus.off(channel, handler);
    };
  }

  async close(): Promise<void> {
    this.#bus.removeAllListeners();
  }
}
