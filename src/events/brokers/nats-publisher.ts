import { connect, Events, headers as natsHeaders } from 'nats';
import type { JetStreamClient, NatsConnection } from 'nats';
import type { Logger } from 'pino';
import type { Delivery } from '../webhooks/delivery.js';
import type { SendResult } from '../webhooks/webhook-sender.js';
import { BrokerHealth } from './broker-health.js';
import type { BrokerPublisher, BrokerStatus } from './broker-publisher.js';

/** After a failed connection, publishes fail at once for this long rather than each trying to connect. */
const RECONNECT_AFTER_MS = 1000;
/** How often a broker that is down is tried again while no event asks for it. */
/** Every event subject starts with this word; the stream takes `switchboard.>`. */
export const NATS_SUBJECT_PREFIX = 'switchboard';

export interface NatsPublisherOptions {
  url: string;
  /** The JetStream stream, created (on `switchboard.>`) if missing. */
  stream: string;
  /** Its limits when it is created: the oldest message kept (0: no limit) and the bytes kept (-1: no limit). */
  maxAgeMs: number;
  maxBytes: number;
  /** A publish not acknowledged by the stream within this fails (and is retried). */
  timeoutMs: number;
  log: Logger;
}

/**
 * NATS JetStream: each event is published on `switchboard.<account>.<instance>.<event>` with the event's id
 * as `Nats-Msg-Id`, so that the stream's duplicate window stores a retried publish once; it counts as
 * published only once the stream acknowledged it. The client reconnects on its own; until the stream
 * answers, publishes fail and their deliveries wait in the queue.
 */
export class NatsPublisher implements BrokerPublisher {
  readonly transport = 'nats' as const;
  #connection: NatsConnection | undefined;
  #client: Promise<JetStreamClient> | undefined;
  #failedAt = 0;
  #lastError: string | undefined;
  #closed = false;

  readonly #health: BrokerHealth;

  constructor(private readonly options: NatsPublisherOptions) {
    this.#health = new BrokerHealth(this.transport, options.log, false);
  }

  status(): BrokerStatus {
    return this.#health.status;
  }

  /** Connects now, and again every few seconds while down, so the status is true even without events. */
  start(): void {
    this.#health.keep(() => void this.#ready().catch(() => undefined));
  }

  async #open(): Promise<JetStreamClient> {
    const nc = await connect({
      servers: this.options.url,
      maxReconnectAttempts: -1,
      reconnectTimeWait: 500,
      timeout: this.options.timeoutMs,
      name: 'switchboard',
    });
    this.#connection = nc;
    void (async () => {
      for await (const s of nc.status()) {
        if (s.type === Events.Disconnect) this.#health.set(false, 'disconnected from the NATS server');
        if (s.type === Events.Reconnect) this.#health.set(true);
      }
    })().catch(() => undefined);
    const jsm = await nc.jetstreamManager({ timeout: this.options.timeoutMs });
    try {
      await jsm.streams.info(this.options.stream);
    } catch (err) {
      if (!/stream not found/i.test((err as Error).message)) throw err;
      await jsm.streams.add({
        name: this.options.stream,
        subjects: [`${NATS_SUBJECT_PREFIX}.>`],
        max_age: this.options.maxAgeMs * 1_000_000,
        max_bytes: this.options.maxBytes,
      });
    }
    this.#health.set(true);
    return nc.jetstream({ timeout: this.options.timeoutMs });
  }

  #ready(): Promise<JetStreamClient> {
    if (this.#closed) return Promise.reject(new Error('the node is stopping'));
    if (!this.#client) {
      if (Date.now() - this.#failedAt < RECONNECT_AFTER_MS) {
        return Promise.reject(new Error(this.#lastError ?? 'not connected'));
      }
      this.#client = this.#open();
      this.#client.catch((err: unknown) => {
        this.#client = undefined;
        const nc = this.#connection;
        this.#connection = undefined;
        void nc?.close().catch(() => undefined);
        this.#failedAt = Date.now();
        this.#lastError = (err as Error).message;
        this.#health.set(false, this.#lastError);
      });
    }
    return this.#client;
  }

  async publish(d: Delivery): Promise<SendResult> {
    try {
      const js = await this.#ready();
      const h = natsHeaders();
      h.set('Content-Type', 'application/json');
      h.set('Switchboard-Event', d.event);
      await js.publish(`${NATS_SUBJECT_PREFIX}.${d.topic ?? ''}`, Buffer.from(d.body, 'utf8'), {
        msgID: d.eventId ?? d.id,
        timeout: this.options.timeoutMs,
        headers: h,
      });
      this.#health.set(true);
      return { ok: true, status: 200 };
    } catch (err) {
      const error = `NATS JetStream did not store the message: ${(err as Error).message}`;
      this.#health.set(false, error);
      return { ok: false, retryable: true, error };
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#health.stop();
    const nc = this.#connection;
    this.#connection = undefined;
    this.#client = undefined;
    await nc?.close().catch(() => undefined);
  }
}
