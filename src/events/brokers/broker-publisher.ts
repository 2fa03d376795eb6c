import type { BrokerTransport, Delivery } from '../webhooks/delivery.js';
import type { SendResult } from '../webhooks/webhook-sender.js';

/** Whether a broker takes events now; `since` is when it last changed, `error` why it is down. */
export interface BrokerStatus {
  up: boolean;
  since: string;
  error?: string;
}

/**
 * Publishes a broker's delivery and says how it went: `ok` only once the broker confirmed it, so the
 * delivery leaves the durable queue only then; a failure is retried like a webhook's.
 */
export interface BrokerPublisher {
  readonly transport: BrokerTransport;
  publish(d: Delivery): Promise<SendResult>;
  status(): BrokerStatus;
  /** Connects (and keeps trying while down) before any event needs it. */
  start(): void;
  close(): Promise<void>;
}
