import { configureMediaTools } from './media/media-tools.js';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import type Koa from 'koa';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { AccountWebhookService } from './accounts/account-webhook-service.js';
import { BillingCron } from './billing/billing-cron.js';
import { instanceBehavior } from './actors/instance-behavior.js';
import type { ActorBehavior } from './actors/instance-actor.js';
import { TestProbe } from './actors/test-probe.js';
import { ClusterRuntime } from './cluster/cluster-runtime.js';
import type { Config } from './config/config.js';
import { BusEventSink, FanOutSink } from './events/bus-event-sink.js';
import { EnvelopeBuilder } from './events/envelope-builder.js';
import type { DeliveryQueue } from './events/webhooks/delivery.js';
import { storeSecretSource } from './events/webhooks/account-signature.js';
import { AccountWebhookDispatcher } from './events/webhooks/account-webhook-dispatcher.js';
import { DeliveryWorker } from './events/webhooks/delivery-worker.js';
import { OutboxDeliveryQueue } from './events/webhooks/outbox-delivery-queue.js';
import { RedisDeliveryQueue } from './events/webhooks/redis-delivery-queue.js';
import { WebhookDispatcher } from './events/webhooks/webhook-dispatcher.js';
import { WebhookSender } from './events/webhooks/webhook-sender.js';
import type { EventBus } from './events/event-bus.js';
import type { EventEnvelope } from './events/instance-events.js';
import { createApp } from './http/app.js';
import type { AppState } from './http/app-state.js';
import { createAuthenticator } from './http/auth.js';
import { createWebSocketGateway } from './http/ws/websocket-gateway.js';
import type { WebSocketGateway } from './http/ws/websocket-gateway.js';
import { isLoopbackHost } from './http/https-only.js';
import { BlockSettings } from './instances/block-settings.js';
import { InstanceService } from './instances/instance-service.js';
import { RedisMediaBlobs, StoreMediaBlobs } from './media/media-blobs.js';
import { MediaCounters } from './media/media-counters.js';
import { ObjectStorageClients } from './media/object-storage.js';
import { ReceivedMediaPipeline } from './events/received-media.js';
import { helpdeskExtension } from './integrations/helpdesk/helpdesk-extension.js';
import { HelpdeskService } from './integrations/helpdesk/helpdesk-service.js';
import { chatbotExtension } from './integrations/chatbot/chatbot-extension.js';
import { ChatbotService } from './integrations/chatbot/chatbot-service.js';
import { TypebotClient } from './integrations/chatbot/typebot-client.js';
import { NodeMetrics } from './metrics/metrics.js';
import { resolveEncryptionKey } from './security/encryption-key.js';
import { createDriver } from './msgnet/create-driver.js';
import { SecretBox } from './security/secret-box.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';
import { actorCaller } from './cluster/actor-caller.js';
import { sandboxExtension } from './integrations/sandbox/sandbox-extension.js';

export interface RunningNode {
  nodeId: string;
  /** Where the node listens, e.g. http://127.0.0.1:8080 */
  url: string;
  store: Store;
  runtime: ClusterRuntime;
  logger: Logger;
  /** The node's HTTP(S) listener. */
  server: Server;
  /** GET /ws/:instance on `server`. */
  websockets: WebSocketGateway;
  /** What happened to received media on this node (downloads, uploads, kept copies), for metrics. */
  mediaCounters: MediaCounters;
  /** The Koa application behind `server` (its middleware holds every mounted router). */
  app: Koa<AppState>;
  /** This node's Prometheus metrics (GET /metrics). */
  metrics: NodeMetrics;
  /** Graceful stop: no new requests, every actor handed off, leases released, connections closed. */
  close(): Promise<void>;
}

/** Wires one Switchboard node from its configuration and starts listening. */
export async function startNode(config: Config, options: { logger?: Logger } = {}): Promise<RunningNode> {
  const nodeId = config.nodeId ?? `node-${randomUUID().slice(0, 8)}`;
  const logger = (options.logger ?? pino({ level: config.logLevel })).child({ node: nodeId });

  const key = resolveEncryptionKey(config);
  if (key.source === 'file-created') {
    logger.warn('no ENCRYPTION_KEY: created a key file in DATA_DIR (keep it safe and back it up)');
  }
  const secrets = new SecretBox(key.key);
  const store = await openStore(config);
  const metrics = new NodeMetrics(nodeId);
  let url = '';
  const probe = config.testProbe ? new TestProbe(config.testProbe.file, config.testProbe.writeIntervalMs) : undefined;
  if (probe) logger.warn('TEST_PROBE_FILE is set: test-only write probe enabled');
  // The behaviour needs the runtime's transport and bus, and the runtime needs the behaviour: bound late.
  const late: { behavior?: (instanceId: string) => ActorBehavior } = {};
  let runtime: ClusterRuntime;
  try {
    runtime = await ClusterRuntime.create({
      nodeId,
      config,
      store,
      log: logger,
      behavior: (instanceId) => late.behavior!(instanceId),
      url: () => url,
      metrics,
    });
  } catch (err) {
    await store.close();
    throw err;
  }
  const driver = await createDriver(config.msgnetDriver, runtime.transport, {
    allowPrivateUrls: config.allowPrivateUrls,
  });
  const envelopes = new EnvelopeBuilder(secrets, () => config.publicBaseUrl ?? url);
  // Webhooks: a durable queue (Redis Streams across nodes, or the store's outbox in embedded mode).
  const queue: DeliveryQueue = runtime.redis
    ? new RedisDeliveryQueue(runtime.redis, nodeId, logger)
    : new OutboxDeliveryQueue(store.deliveries);
  const dispatcher = new WebhookDispatcher(store, queue, envelopes);
  // Received media: one kept copy per file (Redis in cluster mode, else the store), buckets per instance.
  const mediaCounters = new MediaCounters();
  const mediaBlobs = runtime.redis ? new RedisMediaBlobs(runtime.redis) : new StoreMediaBlobs(store.mediaBlobs);
  const objectStorage = new ObjectStorageClients({
    allowPrivateUrls: config.allowPrivateUrls,
    timeoutMs: config.receivedMedia.storageTimeoutMs,
    urlExpirySeconds: config.receivedMedia.urlExpirySeconds,
    publicUrls: config.receivedMedia.publicUrls,
  });
  const receivedMedia = new ReceivedMediaPipeline({
    store,
    secrets,
    blobs: mediaBlobs,
    storage: objectStorage,
    counters: mediaCounters,
    webhooks: (instanceId) => dispatcher.webhooks(instanceId),
    maxBytes: config.media.maxBytes,
    downloadTimeoutMs: config.media.fetchTimeoutMs,
    blobTtlMs: config.receivedMedia.blobTtlMs,
  });
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
    mediaBlobs,
    mediaCounters,
    metrics,
  });
  dispatcher.onEnqueue(() => worker.nudge());
  const accountDispatcher = new AccountWebhookDispatcher(store, queue);
  accountDispatcher.onEnqueue(() => worker.nudge());
  // Registered before runtime.start(), which starts every singleton; `holding` is bound once it exists.
  const billing: { holding: () => boolean } = { holding: () => false };
  const billingCron = new BillingCron({
    store,
    dispatcher: accountDispatcher,
    terms: config.billing,
    cron: config.billing.cron,
    tickMs: config.billing.tickMs,
    holding: () => billing.holding(),
    log: logger.child({ role: 'billing-cron' }),
  });
  const billingSingleton = runtime.singleton('billing-cron', billingCron);
  billing.holding = () => billingSingleton.holding;
  const publicBaseUrl = () => config.publicBaseUrl ?? url;
  // The helpdesk (Chatwoot) bridge runs in every actor when its module is on.
  const helpdeskExtensions = config.helpdesk.enabled
    ? [
        helpdeskExtension({
          secrets,
          options: config.helpdesk,
          media: config.media,
          allowPrivateUrls: config.allowPrivateUrls,
          publicBaseUrl,
        }),
      ]
    : [];
  // The chatbot module (CHATBOT_ENABLED): bots in the store, conversations in each instance's actor.
  const chatbot = config.chatbot.enabled
    ? new ChatbotService({ store, allowPrivateUrls: config.allowPrivateUrls, log: logger.child({ module: 'chatbot' }) })
    : undefined;
  const typebot = new TypebotClient({ timeoutMs: config.chatbot.timeoutMs, allowPrivateUrls: config.allowPrivateUrls });
  late.behavior = instanceBehavior({
    messaging: {
      driver,
      secrets,
      sink: new FanOutSink({
        bestEffort: [new BusEventSink(runtime.events as EventBus<EventEnvelope>, envelopes)],
        durable: dispatcher,
        log: logger,
      }),
      media: receivedMedia,
      // Every extension of the instance actors, each only where its module (or driver) is on.
      extensions: [
        ...(chatbot ? [chatbotExtension({ service: chatbot, client: typebot, media: config.media })] : []),
        ...helpdeskExtensions,
        ...(driver.name === 'sandbox' ? [sandboxExtension()] : []),
      ],
    },
    probe,
  });
  const helpdesk = config.helpdesk.enabled
    ? new HelpdeskService({
        store,
        secrets,
        actors: actorCaller(runtime.router, config.cluster.callTimeoutMs),
        allowPrivateUrls: config.allowPrivateUrls,
        publicBaseUrl,
        log: logger.child({ module: 'helpdesk' }),
      })
    : undefined;
  const accounts = new AccountService(store, config.defaultInstanceQuota);
  const instances = new InstanceService({
    store,
    secrets,
    allowPrivateUrls: config.allowPrivateUrls,
    logger,
    helpdesk,
    ...(chatbot ? { chatbot } : {}),
  });

  if (config.embedded) {
    const token = await accounts.ensureFirstAccount();
    // Printed once, on the first start only: the token cannot be recovered later.
    if (token) {
      logger.info({ account: 'default', token }, 'created account "default"; its TokenAccount is shown only now');
    }
  }

  const requireHttps = !(config.tls || config.allowInsecureHttp || isLoopbackHost(config.host));
  const app = createApp({
    nodeId,
    mode: runtime.mode,
    logger,
    store,
    rateLimiter: runtime.rateLimiter,
    runtime,
    accounts,
    instances,
    adminToken: config.adminToken,
    metrics,
    metricsToken: config.metricsToken,
    trustProxy: config.trustProxy,
    requireHttps,
    maxBodyBytes: config.maxBodyBytes,
    rateLimitPerMinute: config.rateLimitPerMinute,
    rateLimitCreatePerMinute: config.rateLimitCreatePerMinute,
    callTimeoutMs: config.cluster.callTimeoutMs,
    probeEnabled: probe !== undefined,
    sandbox: driver.name === 'sandbox',
    webhooks: { queue, dispatcher },
    accountWebhooks: new AccountWebhookService({
      store,
      secrets,
      dispatcher: accountDispatcher,
      allowPrivateUrls: config.allowPrivateUrls,
    }),
    ...(chatbot ? { chatbot } : {}),
    secrets,
    allowPrivateUrls: config.allowPrivateUrls,
    media: config.media,
    receivedMedia: {
      blocks: new BlockSettings({
        store,
        secrets,
        allowPrivateUrls: config.allowPrivateUrls,
        storage: objectStorage,
        logger,
      }),
      blobs: mediaBlobs,
      storage: objectStorage,
    },
    helpdesk: { service: helpdesk, webhookRatePerMinute: config.helpdesk.webhookRatePerMinute },
    healthChecks: [
      { name: 'store', check: () => store.ping() },
      ...(runtime.mode === 'cluster' ? [{ name: 'redis', check: () => runtime.ping() }] : []),
    ],
  });
  app.on('error', (err: unknown) => logger.debug({ err }, 'koa error'));

  // Slow clients are cut off as a balancer would: headers within a few seconds, the whole request within a
  // bounded time (408), checked often enough that the bound holds to about a tenth.
  const { headersMs, requestMs } = config.httpTimeouts;
  const serverOptions = {
    headersTimeout: headersMs,
    requestTimeout: requestMs,
    connectionsCheckingInterval: Math.max(50, Math.min(1000, Math.floor(headersMs / 10))),
    // Idle keep-alive connections outlive a balancer's usual 60 s idle timeout (Node's default is 5 s), so a
    // balancer or client never reuses a connection the node is closing at that moment (ECONNRESET, 502).
    keepAliveTimeout: 65_000,
  };
  const server: Server = config.tls
    ? createHttpsServer(
        { ...serverOptions, cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) },
        app.callback(),
      )
    : createHttpServer(serverOptions, app.callback());
  const websockets = createWebSocketGateway({
    store,
    auth: createAuthenticator(store, config.adminToken),
    rateLimiter: runtime.rateLimiter,
    events: runtime.events,
    logger,
    requireHttps,
    trustProxy: config.trustProxy,
    allowedOrigins: config.allowedWsOrigins,
    rateLimitPerMinute: config.rateLimitPerMinute,
    ...config.websocket,
  });
  websockets.attach(server);
  metrics.watch({
    actorsOwned: () => runtime.host.size,
    mailboxes: () => runtime.host.mailboxes(),
    webhookQueueDepth: () => queue.depth(),
    websocketClients: () => ({ instance: websockets.size, console: websockets.consoleSize }),
    receivedMedia: () => mediaCounters.snapshot(),
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  url = `${config.tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  await runtime.start();
  worker.start();
  logger.info({ url, mode: runtime.mode, store: store.kind }, 'node listening');
  const tools = await configureMediaTools(config.media);
  logger.info(
    {
      ffmpeg: tools.ffmpeg.command,
      ffmpegSource: tools.ffmpeg.source,
      ffprobe: tools.ffprobe.command,
      ffprobeSource: tools.ffprobe.source,
    },
    tools.ffmpeg.source === 'missing' || tools.ffprobe.source === 'missing'
      ? 'media tools: ffmpeg or ffprobe not found (audio conversion and media checks will fail)'
      : 'media tools',
  );

  let closing: Promise<void> | undefined;
  return {
    nodeId,
    url,
    store,
    runtime,
    logger,
    server,
    websockets,
    mediaCounters,
    app,
    metrics,
    close() {
      closing ??= (async () => {
        const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await websockets.close();
        await runtime.stop();
        await worker.stop();
        await driver.close();
        objectStorage.close();
        // Requests still open after the handoff get a short grace, then their connections are cut.
        await Promise.race([serverClosed, new Promise((r) => setTimeout(r, 5000).unref())]);
        server.closeAllConnections();
        await store.close();
        logger.info('node stopped');
      })();
      return closing;
    },
  };
}
