import type { Logger } from 'pino';
import type { Transport } from '../transport/transport.js';
import { channels } from '../redis/keys.js';

/**
 * Fan-out of one instance's events to every node: the owner publishes once on the instance's channel,
 * and each node that holds WebSockets for that instance subscribes. Fire-and-forget, like the
 * WebSocket itself (webhooks use the durable queue instead).
 */
export class EventBus<E> {
  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
  ) {}

  /** Resolves with how many nodes listen on the instance's channel. */
  publish(instanceId: string, event: E): Promise<number> {
    return this.transport.publish(channels.events(instanceId), JSON.stringify(event));
  }

  /** Resolves once the subscription is live; returns the unsubscribe function. */
  subscribe(instanceId: string, handler: (event: E) => void): Promise<() => Promise<void>> {
    return this.transport.subscribe(channels.events(instanceId), (raw) => {
      let event: E;
      try {
        event = JSON.parse(raw) as E;
      } catch (err) {
        this.log.warn({ err, instanceId }, 'dropped a malformed event');
        return;
      }
      handler(event);
    });
  }
}
