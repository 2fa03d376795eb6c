import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type Koa from 'koa';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { AccountWebhookService } from './accounts/account-webhook-service.js';
import { instanceBehavior } from './actors/instance-behavior.js';
import { TestProbe } from './actors/test-probe.js';
import { BillingCron } from './billing/billing-cron.js';
import { ClusterRuntime } from './cluster/cluster-runtime.js';
import type { Config } from './config/config.js';
import { BusEventSink, FanOutSink } from './events/bus-event-sink.js';
import { ReceivedMediaPipeline } from './events/received-media.js';
import type { AppState } from './http/app-state.js';
import type { WebSocketGateway } from './http/ws/websocket-gateway.js';
import { BlockSettings } from './instances/block-settings.js';
import { InstanceService } from './instances/instance-service.js';
import type { MediaCounters } from './media/media-counters.js';
import { configureMediaTools } from './media/media-tools.js';
import { NodeMetrics } from './metrics/metrics.js';
import { createDriver } from './msgnet/create-driver.js';
import { buildHttp, requiresHttps } from './node/build-http.js';
import { buildIntegrations } from './node/build-integrations.js';
import { buildMedia } from './node/build-media.js';
import { buildWebhooks } from './node/build-webhooks.js';
import { Teardown } from './node/teardown.js';
import { resolveEncryptionKey } from './security/encryption-key.js';
import { SecretBox } from './security/secret-box.js';
import { openStore } from './store/open-store.js';
import { countOperations } from './store/count-operations.js';
import { reportInstanceChanges } from './store/report-instance-changes.js';
import { InstanceRecordCache } from './instances/instance-record-cache.js';
import type { Store } from './store/store.js';
import { EventLoopDelay } from './util/event-loop-delay.js';

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

/**
 * Wires one Switchboard node from its configuration and starts listening: store, cluster runtime, media,
 * webhooks, integrations, the instance behaviour, then the HTTP edge (src/node/ builds each part). A step
 * that fails undoes the ones before it, in reverse order.
 */
export async function startNode(config: Config, options: { logger?: Logger } = {}): Promise<RunningNode> {
  const nodeId = config.nodeId ?? `node-${randomUUID().slice(0, 8)}`;
  const logger = (options.logger ?? pino({ level: config.logLevel })).child({ node: nodeId });
  const teardown = new Teardown();
  try {
    return await assemble(config, nodeId, logger, teardown);
  } catch (err) {
    await teardown.run(logger);
    throw err;
  }
}

async function assemble(config: Config, nodeId: string, logger: Logger, teardown: Teardown): Promise<RunningNode> {
  const key = resolveEncryptionKey(config);
  if (key.source === 'file-created') {
    logger.warn('no ENCRYPTION_KEY: created a key file in DATA_DIR (keep it safe and back it up)');
  }
  const secrets = new SecretBox(key.key);
  const opened = await openStore(config, logger);
  teardown.add('store', () => opened.close());
  // A store call or a stall that holds the loop past a third of the lease TTL may cost the node its lease.
  const stallMs = Math.floor(config.cluster.leaseTtlMs / 3);
  const counted = countOperations(opened, {
    blockingMs: stallMs,
    onBlocking: (call, ms) => logger.warn({ call, ms }, 'a store call blocked the event loop'),
  });
  // The edge reads instance records through this cache; every write to one, from any part of any node, empties it.
  const instanceRecords = new InstanceRecordCache(counted.store.instances);
  const store = reportInstanceChanges(counted.store, (instanceId) => instanceRecords.changedHere(instanceId));
  const metrics = new NodeMetrics(nodeId);
  let url = '';
  const publicBaseUrl = () => config.publicBaseUrl ?? url;
  const probe = config.testProbe ? new TestProbe(config.testProbe.file, config.testProbe.writeIntervalMs) : undefined;
  if (probe) logger.warn('TEST_PROBE_FILE is set: test-only write probe enabled');

  const runtime = await ClusterRuntime.create({ nodeId, config, store, log: logger, url: () => url, metrics });
  teardown.add('cluster runtime', () => runtime.stop());
  const stopFollowing = await instanceRecords.follow(runtime.instanceNews);
  teardown.add('instance news', stopFollowing);
  const loopDelay = new EventLoopDelay({
    stallMs,
    onStall: (ms) => logger.warn({ ms, leaseState: runtime.host.leaseState }, 'event loop stalled'),
  });
  loopDelay.start();
  teardown.add('event-loop delay', () => loopDelay.stop());
  const driver = await createDriver(config.msgnetDriver, runtime.transport, {
    allowPrivateUrls: config.allowPrivateUrls,
    whatsapp: config.whatsapp,
    nodeId,
    connectRatePerSecond: config.connectRatePerSecond,
    overloaded: () => loopDelay.recentMs() > config.connectMaxLoopDelayMs,
  });
  if (config.whatsapp) {
    logger.warn({ url: config.whatsapp.wsUrl }, 'WHATSAPP_WS_URL is set: talking to a WhatsApp simulator');
  }
  teardown.add('network driver', () => driver.close());
  const media = buildMedia({ config, store, runtime });
  teardown.add('object storage', () => media.storage.close());
  const webhooks = buildWebhooks({
    config,
    store,
    secrets,
    blobs: media.blobs,
    counters: media.counters,
    metrics,
    logger,
    publicBaseUrl,
  });
  const brokerStatus = () => Object.fromEntries(webhooks.publishers.map((p) => [p.transport, p.status()]));
  runtime.singleton(
    'billing-cron',
    (holding) =>
      new BillingCron({
        store,
        dispatcher: webhooks.accountDispatcher,
        terms: config.billing,
        cron: config.billing.cron,
        tickMs: config.billing.tickMs,
        holding,
        log: logger.child({ role: 'billing-cron' }),
      }),
  );
  const integrations = buildIntegrations({ config, store, runtime, secrets, driver, logger, publicBaseUrl });
  const behavior = instanceBehavior({
    messaging: {
      driver,
      secrets,
      sink: new FanOutSink({
        bestEffort: [new BusEventSink(runtime.events, webhooks.envelopes)],
        durable: webhooks.dispatcher,
        log: logger,
      }),
      salvage: webhooks.dispatcher,
      media: new ReceivedMediaPipeline({
        store,
        secrets,
        blobs: media.blobs,
        storage: media.storage,
        counters: media.counters,
        webhooks: (instanceId) => webhooks.dispatcher.webhooks(instanceId),
        maxBytes: config.media.maxBytes,
        downloadTimeoutMs: config.media.fetchTimeoutMs,
        blobTtlMs: config.receivedMedia.blobTtlMs,
      }),
      extensions: integrations.extensions,
    },
    probe,
  });
  const accounts = new AccountService(store, config.defaultInstanceQuota, runtime.credentials);
  const instances = new InstanceService({
    store,
    secrets,
    allowPrivateUrls: config.allowPrivateUrls,
    logger,
    credentials: runtime.credentials,
    helpdesk: integrations.helpdesk,
    ...(integrations.chatbot ? { chatbot: integrations.chatbot } : {}),
  });
  if (config.embedded) {
    const token = await accounts.ensureFirstAccount();
    // Printed once, on the first start only: the token cannot be recovered later.
    if (token) {
      logger.info({ account: 'default', token }, 'created account "default"; its TokenAccount is shown only now');
    }
  }

  const { app, server, websockets } = buildHttp(config, {
    node: {
      nodeId,
      mode: runtime.mode,
      logger,
      metrics,
      probeEnabled: probe !== undefined,
      sandbox: driver.name === 'sandbox',
      healthChecks: [
        { name: 'store', check: () => store.ping() },
        ...(runtime.mode === 'cluster' ? [{ name: 'redis', check: () => runtime.ping() }] : []),
      ],
    },
    store,
    instanceRecords,
    runtime,
    services: {
      accounts,
      instances,
      accountWebhooks: new AccountWebhookService({
        store,
        secrets,
        dispatcher: webhooks.accountDispatcher,
        allowPrivateUrls: config.allowPrivateUrls,
      }),
      helpdesk: integrations.helpdesk,
      chatbot: integrations.chatbot,
    },
    security: {
      secrets,
      adminToken: config.adminToken,
      metricsToken: config.metricsToken,
      trustProxy: config.trustProxy,
      requireHttps: requiresHttps(config),
      allowPrivateUrls: config.allowPrivateUrls,
    },
    limits: {
      maxBodyBytes: config.maxBodyBytes,
      rateLimitPerMinute: config.rateLimitPerMinute,
      rateLimitCreatePerMinute: config.rateLimitCreatePerMinute,
      helpdeskWebhookPerMinute: config.helpdesk.webhookRatePerMinute,
      callTimeoutMs: config.cluster.callTimeoutMs,
      media: config.media,
    },
    webhooks: {
      queue: webhooks.queue,
      brokers: webhooks.publishers.map((p) => p.transport),
      brokerStatus: brokerStatus,
    },
    receivedMedia: {
      blocks: new BlockSettings({
        store,
        secrets,
        allowPrivateUrls: config.allowPrivateUrls,
        storage: media.storage,
        logger,
      }),
      blobs: media.blobs,
      storage: media.storage,
    },
  });
  teardown.add('websockets', () => websockets.close());
  metrics.watch({
    actorsOwned: () => runtime.host.size,
    mailboxes: () => runtime.host.mailboxes(),
    webhookQueueDepth: () => webhooks.queue.depth(),
    brokersUp: () => Object.fromEntries(webhooks.publishers.map((p) => [p.transport, p.status().up])),
    websocketClients: () => ({ instance: websockets.size, console: websockets.consoleSize }),
    receivedMedia: () => media.counters.snapshot(),
    storeOperations: () => counted.counts(),
    whatsapp: () => driver.stats?.() ?? { connected: 0, loginsWaiting: 0, loginsRefused: 0, loginsHeldBack: 0 },
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  teardown.add('listener', () => new Promise<void>((resolve) => server.close(() => resolve())));
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  url = `${config.tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  await runtime.start(behavior);
  webhooks.worker.start();
  teardown.add('webhook worker', () => webhooks.worker.stop());
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
    mediaCounters: media.counters,
    app,
    metrics,
    close() {
      closing ??= (async () => {
        const serverClosed = new Promise<void>((resolve) => server.close(() => resolve()));
        server.closeIdleConnections();
        await websockets.close();
        await runtime.stop();
        await webhooks.worker.stop();
        await webhooks.queue.close();
        await driver.close();
        media.storage.close();
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
