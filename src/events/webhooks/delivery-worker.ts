import type { Logger } from 'pino';
import type { MediaBlobStore } from '../../media/media-blobs.js';
import type { MediaCounters } from '../../media/media-counters.js';
import type { DeliveryMetrics } from '../../metrics/metrics.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { signatureHeader } from './account-signature.js';
import type { AccountSecretSource } from './account-signature.js';
import type { BrokerTransport, Delivery, DeliveryQueue } from './delivery.js';
import type { BrokerPublisher } from '../brokers/broker-publisher.js';
import { withMediaBase64 } from './media-attachment.js';
import { standardHeaders } from './webhook-signature.js';
import type { WebhookSecretSource } from './webhook-signature.js';
import { nextDelayMs } from './retry-policy.js';
import type { RetryPolicy } from './retry-policy.js';
import type { SendResult, WebhookSender } from './webhook-sender.js';

type SendFailure = Extract<SendResult, { ok: false }>;

export interface DeliveryWorkerOptions {
  queue: DeliveryQueue;
  sender: WebhookSender;
  secrets: SecretBox;
  policy: RetryPolicy;
  log: Logger;
  /** POSTs in flight at once on this node. @default 64 */
  concurrency: number;
  /** A taken delivery not settled within this is taken again by another node. @default 30000 */
  leaseMs: number;
  /** Sleep between polls while the queue gives work. @default 100 */
  pollMs: number;
  /**
   * The longest sleep between polls of a queue found empty (doubling from `pollMs`): due retries and a dead
   * node's deliveries wait at most this long, and an idle node costs the store a query per period.
   * @default pollMs
   */
  idlePollMs?: number;
  /** Where account deliveries find their account's current signing secret. */
  accountSecrets?: AccountSecretSource;
  /** The brokers this node publishes to, by transport. */
  publishers?: Partial<Record<BrokerTransport, BrokerPublisher>>;
  /** Where instance deliveries find their webhook's signing secrets. */
  webhookSecrets?: WebhookSecretSource;
  /** Where base64 deliveries find the kept copy of their received file (`Delivery.mediaBlob`). */
  mediaBlobs?: MediaBlobStore;
  /** Counts base64 deliveries whose copy had expired. */
  mediaCounters?: MediaCounters;
  metrics?: DeliveryMetrics;
}

/** Outcomes, for metrics and tests. */
export interface DeliveryListener {
  delivered(d: Delivery, ms: number): void;
  retried(d: Delivery, error: string, dueAt: number): void;
  buried(d: Delivery, error: string): void;
}

/**
 * Takes due deliveries from the queue and POSTs them, at most `concurrency` at a time: a 2xx completes
 * one; a network error, 5xx or 429 schedules another attempt with backoff (honouring Retry-After) until
 * the policy's attempts are spent; any other answer buries it in the dead letters at once.
 */
export class DeliveryWorker {
  #inFlight = 0;
  #running = false;
  #loop: Promise<void> | undefined;
  /** Ends the current sleep (set while the loop sleeps). */
  #wake: (() => void) | undefined;
  /** The wake-up planned for the end of this event-loop turn. */
  #soon: NodeJS.Immediate | undefined;
  /** Something asked for a take since the loop's last one began. */
  #due = false;
  /** The queue may hold deliveries not taken yet: the last take was full, or something was queued since. */
  #more = false;
  readonly #refillAt: number;
  /** The current sleep between polls: `pollMs` after a take that found work, doubling up to `idlePollMs`. */
  #pollMs: number;
  readonly #listeners: Partial<DeliveryListener>[] = [];
  readonly #pending = new Set<Promise<void>>();

  constructor(private readonly options: DeliveryWorkerOptions) {
    // Slots are refilled in batches: a take per finished POST would cost the queue a query each.
    this.#refillAt = Math.ceil(options.concurrency / 8);
    this.#pollMs = options.pollMs;
  }

  on(listener: Partial<DeliveryListener>): void {
    this.#listeners.push(listener);
  }

  start(): void {
    this.#running = true;
    for (const p of Object.values(this.options.publishers ?? {})) p.start();
    this.#loop = this.#run();
  }

  /** Something was just queued: poll at the end of this turn rather than after the sleep. */
  nudge(): void {
    this.#more = true;
    this.#signal();
  }

  /** Takes again at the end of this turn, so that the signals of one turn make one take. */
  #signal(): void {
    this.#due = true;
    if (this.#wake && !this.#soon) this.#soon = setImmediate(this.#wake);
  }

  #sleep(): Promise<void> {
    return new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(timer);
        if (this.#soon) clearImmediate(this.#soon);
        this.#soon = undefined;
        this.#wake = undefined;
        resolve();
      };
      const timer = setTimeout(wake, this.#pollMs);
      this.#wake = wake;
      if (this.#due) this.#soon = setImmediate(wake);
    });
  }

  async #run(): Promise<void> {
    while (this.#running) {
      this.#due = false;
      const room = this.options.concurrency - this.#inFlight;
      if (room > 0) {
        try {
          const taken = await this.options.queue.take(room, this.options.leaseMs);
          // A short take emptied the queue: until something is queued, finished POSTs need not refill.
          this.#more = taken.length === room;
          const idle = this.options.idlePollMs ?? this.options.pollMs;
          this.#pollMs = taken.length > 0 ? this.options.pollMs : Math.min(idle, this.#pollMs * 2);
          for (const d of taken) this.#start(d);
        } catch (err) {
          if (this.#running) this.options.log.warn({ err }, 'could not take webhook deliveries; retrying');
        }
      }
      if (this.#running) await this.#sleep();
    }
  }

  #start(d: Delivery): void {
    this.#inFlight++;
    const p = this.#attempt(d).finally(() => {
      this.#inFlight--;
      this.#pending.delete(p);
      if (this.#more && this.options.concurrency - this.#inFlight >= this.#refillAt) this.#signal();
    });
    this.#pending.add(p);
  }

  /** The headers of one attempt, or why it cannot be made (`retry`: later; `bury`: never). */
  async #headers(d: Delivery, body: string): Promise<{ headers: Record<string, string> } | SendFailure> {
    const headers: Record<string, string> = { 'x-switchboard-event': d.event, 'x-switchboard-delivery': d.id };
    if (d.authorizationSealed) {
      headers.authorization = this.options.secrets.open(d.authorizationSealed, SecretPurpose.WebhookAuthorization);
    }
    if (d.signAccountId !== undefined) {
      // Read at every attempt, so a rotation also re-signs retries.
      const secret = await this.options.accountSecrets?.secretFor(d.signAccountId);
      if (secret === undefined) return { ok: false, retryable: true, error: 'no signing secret for the account' };
      headers['x-service-signature'] = signatureHeader(secret, d.body);
    }
    if (d.signed) {
      // Read at every attempt: a rotation signs retries with both secrets, and then with the new one only.
      const secrets = await this.options.webhookSecrets?.secretsFor(d.instanceId, d.label);
      if (!secrets?.length) {
        return {
          ok: false,
          retryable: false,
          error: 'the webhook was deleted or lost its secret: nothing to sign with',
        };
      }
      Object.assign(headers, standardHeaders(secrets, d.eventId ?? d.id, body));
    }
    return { headers };
  }

  /** The body to POST: a base64 delivery gets its file from the kept copy, read at every attempt. */
  async #body(d: Delivery): Promise<string> {
    if (d.mediaBlob === undefined || !this.options.mediaBlobs) return d.body;
    let file: Buffer | undefined;
    try {
      file = await this.options.mediaBlobs.get(d.instanceId, d.mediaBlob);
    } catch (err) {
      throw new Error(`could not read the kept media: ${(err as Error).message}`, { cause: err });
    }
    if (!file) this.options.mediaCounters?.add('blobExpired');
    return withMediaBase64(d.body, file);
  }

  /** A webhook's POST, or a broker's publish (started at once, so one take's publishes keep their order). */
  async #send(d: Delivery): Promise<SendResult> {
    if (d.transport !== undefined) {
      const publisher = this.options.publishers?.[d.transport];
      return publisher
        ? publisher.publish(d)
        : { ok: false, retryable: true, error: `${d.transport} is not configured on this node` };
    }
    const body = await this.#body(d).catch((err: unknown) => err as Error);
    const prepared: { headers: Record<string, string> } | SendFailure =
      body instanceof Error
        ? { ok: false, retryable: true, error: body.message }
        : await this.#headers(d, body).catch((err: unknown) => ({
            ok: false as const,
            retryable: true,
            error: `could not sign: ${(err as Error).message}`,
          }));
    return 'headers' in prepared ? this.options.sender.send(d.url, body as string, prepared.headers) : prepared;
  }

  async #attempt(d: Delivery): Promise<void> {
    const started = performance.now();
    const result = await this.#send(d);
    const attempted: Delivery = { ...d, attempts: d.attempts + 1 };
    try {
      const seconds = (performance.now() - started) / 1000;
      if (result.ok) {
        this.options.metrics?.deliveryAttempt('delivered', seconds);
        await this.options.queue.complete(attempted);
        for (const l of this.#listeners) l.delivered?.(attempted, performance.now() - started);
      } else if (result.retryable && attempted.attempts < this.options.policy.maxAttempts) {
        this.options.metrics?.deliveryAttempt('retried', seconds);
        const dueAt = Date.now() + nextDelayMs(this.options.policy, attempted.attempts, result.retryAfterMs);
        await this.options.queue.retry({ ...attempted, lastError: result.error }, dueAt);
        for (const l of this.#listeners) l.retried?.(attempted, result.error, dueAt);
      } else {
        this.options.metrics?.deliveryAttempt('buried', seconds);
        await this.options.queue.bury({ ...attempted, lastError: result.error });
        this.options.log.warn(
          { instanceId: d.instanceId, label: d.label, event: d.event, error: result.error },
          d.transport ? 'broker delivery given up' : 'webhook delivery given up',
        );
        for (const l of this.#listeners) l.buried?.(attempted, result.error);
      }
    } catch (err) {
      // Left unsettled, the delivery is taken again when its lease runs out: nothing is lost.
      this.options.log.error({ err, deliveryId: d.id }, 'could not settle a webhook delivery');
    }
  }

  /** Stops taking work, waits for the POSTs and publishes in flight to settle, then closes the brokers. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    await Promise.allSettled([...this.#pending]);
    await Promise.all(Object.values(this.options.publishers ?? {}).map((p) => p.close()));
  }
}
