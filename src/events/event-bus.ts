import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { Transport } from '../transport/transport.js';
import { channels } from '../redis/keys.js';
import { DeliveryMemory } from '../transport/delivery-memory.js';

/**
 * Fan-out of one instance's events to every node: the owner publishes once on the instance's channel,
 * and each node that holds WebSockets for that instance subscribes. Fire-and-forget, like the
 * WebSocket itself (webhooks use the durable queue instead).
 */
export class EventBus<E extends object> {
  /** Event ids: unique per process (the prefix) and per event (the counter). */
  readonly #idPrefix = `${randomUUID()}:`;
  #nextId = 0;

  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
  ) {}

  /**
   * Resolves with how many nodes listen on the instance's channel. The message carries a `busId` beside the
   * event's fields, so that a subscriber hands each event over once (DeliveryMemory).
   */
  publish(instanceId: string, event: E): Promise<number> {
    const busId = this.#idPrefix + (this.#nextId++).toString(36);
    return this.transport.publish(channels.events(instanceId), JSON.stringify({ busId, ...event }));
  }

  /** Resolves once the subscription is live; returns the unsubscribe function. */
  subscribe(instanceId: string, handler: (event: E) => void): Promise<() => Promise<void>> {
    const delivered = new DeliveryMemory();
    return this.transport.subscribe(channels.events(instanceId), (raw) => {
      let message: E & { busId?: string };
      try {
        message = JSON.parse(raw) as E & { busId?: string };
      } catch (err) {
        this.log.warn({ err, instanceId }, 'dropped a malformed event');
        return;
      }
      // A node of an earlier version sends no busId: its events are handed over as they come.
      const { busId, ...event } = message;
      if (busId !== undefined && !delivered.first(busId)) {
        this.log.warn({ instanceId }, 'dropped a repeated event');
        return;
      }
      handler(event as E);
    });
  }
}
