import type { Logger } from 'pino';
import type { Config } from '../config/config.js';
import { AmqpPublisher } from '../events/brokers/amqp-publisher.js';
import type { BrokerPublisher } from '../events/brokers/broker-publisher.js';
import { NatsPublisher } from '../events/brokers/nats-publisher.js';
import { EnvelopeBuilder } from '../events/envelope-builder.js';
import { storeSecretSource } from '../events/webhooks/account-signature.js';
import { AccountWebhookDispatcher } from '../events/webhooks/account-webhook-dispatcher.js';
import type { DeliveryQueue } from '../events/webhooks/delivery.js';
import { DeliveryWorker } from '../events/webhooks/delivery-worker.js';
import { OutboxDeliveryQueue } from '../events/webhooks/outbox-delivery-queue.js';
import { WebhookDispatcher } from '../events/webhooks/webhook-dispatcher.js';
import { WebhookSender } from '../events/webhooks/webhook-sender.js';
import { storeWebhookSecrets } from '../events/webhooks/webhook-signature.js';
import type { MediaBlobStore } from '../media/media-blobs.js';
import type { MediaCounters } from '../media/media-counters.js';
import type { NodeMetrics } from '../metrics/metrics.js';
import type { SecretBox } from '../security/secret-box.js';
import type { Store } from '../store/store.js';

export interface NodeWebhooks {
  envelopes: EnvelopeBuilder;
  queue: DeliveryQueue;
  dispatcher: WebhookDispatcher;
  accountDispatcher: AccountWebhookDispatcher;
  worker: DeliveryWorker;
  /** The brokers this node publishes to (their URL set), for the routes, /health and /metrics. */
  publishers: BrokerPublisher[];
}

/**
 * Webhooks: a durable queue (the store's outbox, in every mode: an acknowledged event must survive what
 * Redis may forget), the dispatchers that fill it and the worker that delivers from it (not started yet).
 */
export function buildWebhooks(deps: {
  config: Config;
  store: Store;
  secrets: SecretBox;
  blobs: MediaBlobStore;
  counters: MediaCounters;
  metrics: NodeMetrics;
  logger: Logger;
  publicBaseUrl: () => string;
}): NodeWebhooks {
  const { config, store, secrets, logger } = deps;
  const envelopes = new EnvelopeBuilder(secrets, deps.publicBaseUrl);
  const queue: DeliveryQueue = new OutboxDeliveryQueue(store.deliveries);
  const amqp = config.webhooks.amqp;
  const rabbitmq = amqp ? new AmqpPublisher({ ...amqp, timeoutMs: config.webhooks.timeoutMs, log: logger }) : undefined;
  const nats = config.webhooks.nats
    ? new NatsPublisher({ ...config.webhooks.nats, timeoutMs: config.webhooks.timeoutMs, log: logger })
    : undefined;
  const publishers: BrokerPublisher[] = [rabbitmq, nats].filter((p) => p !== undefined);
  const dispatcher = new WebhookDispatcher(
    store,
    queue,
    envelopes,
    publishers.map((p) => p.transport),
  );
  const worker = new DeliveryWorker({
    queue,
    sender: new WebhookSender({ allowPrivateUrls: config.allowPrivateUrls, timeoutMs: config.webhooks.timeoutMs }),
    secrets,
    policy: {
      maxAttempts: config.webhooks.maxAttempts,
      baseDelayMs: config.webhooks.retryBaseMs,
      maxDelayMs: config.webhooks.retryMaxMs,
    },
    log: logger,
    concurrency: config.webhooks.concurrency,
    leaseMs: config.webhooks.leaseMs,
    pollMs: 100,
    idlePollMs: 1000,
    accountSecrets: storeSecretSource(store, secrets),
    webhookSecrets: storeWebhookSecrets(store, secrets),
    publishers: Object.fromEntries(publishers.map((p) => [p.transport, p])),
    mediaBlobs: deps.blobs,
    mediaCounters: deps.counters,
    metrics: deps.metrics,
  });
  dispatcher.onEnqueue(() => worker.nudge());
  const accountDispatcher = new AccountWebhookDispatcher(store, queue);
  accountDispatcher.onEnqueue(() => worker.nudge());
  return { envelopes, queue, dispatcher, accountDispatcher, worker, publishers };
}
