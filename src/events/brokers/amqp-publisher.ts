import { connect } from 'amqplib';
import type { ChannelModel, ConfirmChannel } from 'amqplib';
import type { Logger } from 'pino';
import type { Delivery } from '../webhooks/delivery.js';
import type { SendResult } from '../webhooks/webhook-sender.js';
import { BrokerHealth } from './broker-health.js';
import type { BrokerPublisher, BrokerStatus } from './broker-publisher.js';

/** After a failed connection, publishes fail at once for this long rather than each trying to connect. */
const RECONNECT_AFTER_MS = 1000;
/** How often a broker that is down is tried again while no event asks for it. */

export interface AmqpPublisherOptions {
  url: string;
  /** The durable topic exchange, declared if missing. */
  exchange: string;
  /** A publish not confirmed within this fails (and is retried). */
  timeoutMs: number;
  log: Logger;
}

/**
 * RabbitMQ (AMQP 0-9-1) over one connection and one confirm channel: each event is a persistent message
 * on the durable topic exchange, routed by `<account>.<instance>.<event>`, with the event's id as its
 * `message_id`; it counts as published only once the broker confirmed it. A lost connection is opened
 * again at the next publish (at most once a second); meanwhile publishes fail and their deliveries wait
 * in the queue.
 */
export class AmqpPublisher implements BrokerPublisher {
  readonly transport = 'rabbitmq' as const;
  #connection: ChannelModel | undefined;
  #channel: Promise<ConfirmChannel> | undefined;
  #failedAt = 0;
  #lastError: string | undefined;
  #closed = false;

  readonly #health: BrokerHealth;

  constructor(private readonly options: AmqpPublisherOptions) {
    this.#health = new BrokerHealth(this.transport, options.log, true);
  }

  status(): BrokerStatus {
    return this.#health.status;
  }

  /** Connects now, and again every few seconds while down, so the status is true even without events. */
  start(): void {
    this.#health.keep(() => void this.#ready().catch(() => undefined));
  }

  #fail(err: unknown): void {
    this.#channel = undefined;
    const connection = this.#connection;
    this.#connection = undefined;
    connection?.close().catch(() => undefined);
    this.#failedAt = Date.now();
    this.#lastError = (err as Error | undefined)?.message ?? 'connection closed';
    this.#health.set(false, this.#lastError);
  }

  async #open(): Promise<ConfirmChannel> {
    const connection = await connect(this.options.url, { timeout: this.options.timeoutMs });
    this.#connection = connection;
    connection.on('error', () => undefined);
    connection.on('close', (err?: Error) => {
      if (this.#connection === connection) this.#fail(err ?? new Error('the broker closed the connection'));
    });
    const channel = await connection.createConfirmChannel();
    channel.on('error', () => undefined);
    channel.on('close', () => {
      if (this.#connection === connection) this.#fail(new Error('the broker closed the channel'));
    });
    await channel.assertExchange(this.options.exchange, 'topic', { durable: true });
    this.#health.set(true);
    return channel;
  }

  #ready(): Promise<ConfirmChannel> {
    if (this.#closed) return Promise.reject(new Error('the node is stopping'));
    if (!this.#channel) {
      if (Date.now() - this.#failedAt < RECONNECT_AFTER_MS) {
        return Promise.reject(new Error(this.#lastError ?? 'not connected'));
      }
      this.#channel = this.#open();
      this.#channel.catch((err: unknown) => this.#fail(err));
    }
    return this.#channel;
  }

  async publish(d: Delivery): Promise<SendResult> {
    let channel: ConfirmChannel;
    try {
      channel = await this.#ready();
    } catch (err) {
      return { ok: false, retryable: true, error: `RabbitMQ unavailable: ${(err as Error).message}` };
    }
    return new Promise<SendResult>((resolve) => {
      const timer = setTimeout(
        () =>
          resolve({
            ok: false,
            retryable: true,
            error: `RabbitMQ did not confirm within ${this.options.timeoutMs} ms`,
          }),
        this.options.timeoutMs,
      );
      try {
        channel.publish(
          this.options.exchange,
          d.topic ?? '',
          Buffer.from(d.body, 'utf8'),
          {
            persistent: true,
            messageId: d.eventId ?? d.id,
            contentType: 'application/json',
            type: d.event,
            timestamp: Math.floor(Date.parse(d.createdAt) / 1000),
            appId: 'switchboard',
          },
          (err: unknown) => {
            clearTimeout(timer);
            resolve(
              err
                ? {
                    ok: false,
                    retryable: true,
                    error: `RabbitMQ refused the message: ${String((err as Error)?.message ?? err)}`,
                  }
                : { ok: true, status: 200 },
            );
          },
        );
      } catch (err) {
        clearTimeout(timer);
        resolve({ ok: false, retryable: true, error: `RabbitMQ publish failed: ${(err as Error).message}` });
      }
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#health.stop();
    const connection = this.#connection;
    this.#connection = undefined;
    this.#channel = undefined;
    await connection?.close().catch(() => undefined);
  }
}
