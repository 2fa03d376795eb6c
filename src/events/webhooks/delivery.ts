import type { EmissionClaim } from '../../store/store.js';

/** The brokers events can be published to. */
export type BrokerTransport = 'rabbitmq' | 'nats';

/** One webhook POST to make: an event for one webhook of one instance. */
export interface Delivery {
  id: string;
  /**
   * The event's id, one for all of an event's deliveries and the same on every attempt: the `webhook-id`
   * header and the brokers' message id. Absent on deliveries queued before events had one (`id` stands in).
   */
  eventId?: string;
  instanceId: string;
  /** The webhook's label (several webhooks per instance). */
  label: string;
  event: string;
  /** The target, with the event name appended when the webhook has `byEvents`. */
  url: string;
  /** Sealed `Authorization` header value, if the webhook has one. */
  authorizationSealed: string | undefined;
  /** Account webhooks: the account whose current secret signs the body at each attempt. */
  signAccountId?: string;
  /** Instance webhooks: signed at each attempt with the webhook's current secrets (Standard Webhooks). */
  signed?: boolean;
  /** Set for a broker's delivery (published, not POSTed); absent for a webhook. */
  transport?: BrokerTransport;
  /** A broker's delivery: `<account>.<instance>.<event>`, each name escaped (`brokerTopic`). */
  topic?: string;
  /** The JSON envelope, as it is POSTed (with the file's bytes added when `mediaBlob` is set). */
  body: string;
  /**
   * Base64 webhooks: the message id of the kept copy of the received file, put into
   * `data.message.media.base64` at each attempt (MediaBlobStore), so the queue never holds the bytes.
   */
  mediaBlob?: string;
  /** Attempts made so far. */
  attempts: number;
  createdAt: string;
  lastError?: string;
  /** The queue's own handle of a taken delivery (a stream entry id); absent before it is queued. */
  receipt?: string;
}

/** A delivery given up on, as GET /api/events/deadLetters shows it. */
export interface DeadLetter extends Delivery {
  failedAt: string;
}

/** The dead letters as the API lists them (per instance, and per account with `withLabel: false`). */
export function deadLettersBody(letters: DeadLetter[], withLabel = true) {
  return {
    success: true,
    message: `${letters.length} ${letters.length === 1 ? 'dead letter' : 'dead letters'}`,
    deadLetters: letters.map((l) => ({
      id: l.id,
      ...(withLabel ? { label: l.label } : {}),
      event: l.event,
      url: l.url,
      attempts: l.attempts,
      lastError: l.lastError ?? null,
      createdAt: l.createdAt,
      failedAt: l.failedAt,
      envelope: JSON.parse(l.body) as unknown,
    })),
    meta: { total: letters.length },
  };
}

/**
 * The durable queue behind webhooks: an event counts as emitted once its deliveries are appended here.
 * Any node may take a delivery; a taken delivery that is neither completed, rescheduled nor buried in
 * time (its node died) is taken again by another node. At-least-once.
 */
export interface DeliveryQueue {
  enqueue(deliveries: Delivery[]): Promise<void>;
  /**
   * A message's event (its deliveries, perhaps none) and the message's emitted mark together, unless that
   * message's event was queued before: then nothing is queued and the answer is false (DeliveryRepository).
   */
  enqueueOnce(deliveries: Delivery[], claim: EmissionClaim): Promise<boolean>;
  /** Takes up to `max` deliveries that are due, for `leaseMs`. */
  take(max: number, leaseMs: number): Promise<Delivery[]>;
  complete(delivery: Delivery): Promise<void>;
  /** Puts it back for another attempt at `dueAt` (Unix ms). */
  retry(delivery: Delivery, dueAt: number): Promise<void>;
  /** Moves it to the instance's dead letters. */
  bury(delivery: Delivery): Promise<void>;
  deadLetters(instanceId: string): Promise<DeadLetter[]>;
  /** Queues the instance's dead letters (all, or those ids) again with fresh attempts; returns how many. */
  redeliver(instanceId: string, ids?: string[]): Promise<number>;
  /** How many deliveries wait (for metrics and tests). */
  depth(): Promise<number>;
  close(): Promise<void>;
}
