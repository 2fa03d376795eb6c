import type { Logger } from 'pino';
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { Config } from '../config/config.js';
import { EnvelopeBuilder } from '../events/envelope-builder.js';
import { storeSecretSource } from '../events/webhooks/account-signature.js';
import { AccountWebhookDispatcher } from '../events/webhooks/account-webhook-dispatcher.js';
import type { DeliveryQueue } from '../events/webhooks/delivery.js';
import { DeliveryWorker } from '../events/webhooks/delivery-worker.js';
import { OutboxDeliveryQueue } from '../events/webhooks/outbox-delivery-queue.js';
import { RedisDeliveryQueue } from '../events/webhooks/redis-delivery-queue.js';
import { WebhookDispatcher } from '../events/webhooks/webhook-dispatcher.js';
import { WebhookSender } from '../events/webhooks/webhook-sender.js';
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
}

/**
 * Webhooks: a durable queue (Redis Streams across nodes, or the store's outbox in embedded mode), the
 * dispatchers that fill it and the worker that delivers from it (not started yet).
 */
export function buildWebhooks(deps: {
  nodeId: string;
  config: Config;
  store: Store;
  runtime: ClusterRuntime;
  secrets: SecretBox;
  blobs: MediaBlobStore;
  counters: MediaCounters;
  metrics: NodeMetrics;
  logger: Logger;
  publicBaseUrl: () => string;
}): NodeWebhooks {
  const { config, store, runtime, secrets, logger } = deps;
  const envelopes = new EnvelopeBuilder(secrets, deps.publicBaseUrl);
  const queue: DeliveryQueue = runtime.redis
    ? new RedisDeliveryQueue(runtime.redis, deps.nodeId, logger)
    : new OutboxDeliveryQueue(store.deliveries);
  const dispatcher = new WebhookDispatcher(store, queue, envelopes);
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
    accountSecrets: storeSecretSource(store, secrets),
    mediaBlobs: deps.blobs,
    mediaCounters: deps.counters,
    metrics: deps.metrics,
  });
  dispatcher.onEnqueue(() => worker.nudge());
  const accountDispatcher = new AccountWebhookDispatcher(store, queue);
  accountDispatcher.onEnqueue(() => worker.nudge());
  return { envelopes, queue, dispatcher, accountDispatcher, worker };
}
