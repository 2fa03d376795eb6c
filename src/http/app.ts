import Koa from 'koa';
import type { Logger } from 'pino';
import type { AccountService } from '../accounts/account-service.js';
import type { AccountWebhookService } from '../accounts/account-webhook-service.js';
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { MediaConfig } from '../config/config.js';
import type { BrokerStatus } from '../events/brokers/broker-publisher.js';
import type { BrokerTransport, DeliveryQueue } from '../events/webhooks/delivery.js';
import type { BlockSettings } from '../instances/block-settings.js';
import type { InstanceService } from '../instances/instance-service.js';
import type { MediaBlobStore } from '../media/media-blobs.js';
import type { ObjectStorageClients } from '../media/object-storage.js';
import type { HelpdeskService } from '../integrations/helpdesk/helpdesk-service.js';
import type { ChatbotService } from '../integrations/chatbot/chatbot-service.js';
import type { NodeMetrics } from '../metrics/metrics.js';
import type { SecretBox } from '../security/secret-box.js';
import type { Store } from '../store/store.js';
import type { ApiRouter } from './api-router.js';
import { startRequest } from './app-state.js';
import type { AppContext, AppState } from './app-state.js';
import { createAuthenticator } from './auth.js';
import type { InstanceRecords } from './auth.js';
import { cachedKnownOrigins, cors } from './cors.js';
import { errorEnvelope } from './error-envelope.js';
import { httpsOnly } from './https-only.js';
import { openApiDocument } from './openapi/openapi-document.js';
import type { OpenApiDocument } from './openapi/openapi-document.js';
import { rateLimit } from './rate-limit.js';
import { accountRoutes } from './routes/account-routes.js';
import { accountWebhookRoutes } from './routes/account-webhook-routes.js';
import { adminRoutes } from './routes/admin-routes.js';
import { callRoutes } from './routes/call-routes.js';
import { communityRoutes } from './routes/community-routes.js';
import { newsletterRoutes } from './routes/newsletter-routes.js';
import { chatbotRoutes } from './routes/chatbot-routes.js';
import { groupRoutes } from './routes/group-routes.js';
import { groupChangeRoutes } from './routes/group-change-routes.js';
import { groupMemberRoutes } from './routes/group-member-routes.js';
import { helpdeskRoutes } from './routes/helpdesk-routes.js';
import { historyRoutes } from './routes/history-routes.js';
import { labelRoutes } from './routes/label-routes.js';
import { privacyRoutes } from './routes/privacy-routes.js';
import { profileRoutes } from './routes/profile-routes.js';
import { statusRoutes } from './routes/status-routes.js';
import { clusterRoutes } from './routes/cluster-routes.js';
import { docsRoutes } from './routes/docs-routes.js';
import { metricsRoutes } from './routes/metrics-routes.js';
import { connectionRoutes } from './routes/connection-routes.js';
import { brokerRoutes } from './routes/broker-routes.js';
import { eventRoutes } from './routes/event-routes.js';
import { messageRoutes } from './routes/message-routes.js';
import { messageKindRoutes } from './routes/message-kind-routes.js';
import { chatRoutes } from './routes/chat-routes.js';
import { profileFieldRoutes } from './routes/profile-field-routes.js';
import { sandboxRoutes } from './routes/sandbox-routes.js';
import { settingsPanelRoutes } from './routes/settings-panel-routes.js';
import { consoleRoutes } from './routes/console-routes.js';
import { healthRoutes } from './routes/health-routes.js';
import type { HealthCheck } from './routes/health-routes.js';
import { instanceBlockRoutes } from './routes/instance-block-routes.js';
import { instanceRoutes } from './routes/instance-routes.js';
import { mediaRoutes } from './routes/media-routes.js';
import { lookupRoutes } from './routes/lookup-routes.js';
import { websocketRoutes } from './routes/websocket-routes.js';
import { actorCaller } from '../cluster/actor-caller.js';
import { dispatchRouters, routesUnderHeads } from './router-dispatch.js';
import { mcpRoutes } from './mcp/mcp-routes.js';
import { packageVersion } from './openapi/openapi-document.js';

/** What the edge needs, grouped by the part of the node that provides it. */
export interface AppDeps {
  node: {
    nodeId: string;
    mode: 'embedded' | 'cluster';
    logger: Logger;
    metrics: NodeMetrics;
    healthChecks: HealthCheck[];
    /** TEST_PROBE_FILE is set: the test write probe's endpoint exists. */
    probeEnabled: boolean;
    /** The sandbox driver is on: its control endpoints exist. */
    sandbox: boolean;
  };
  store: Store;
  /** Where the edge reads the instance a request names (a cache that every change to a record empties). */
  instanceRecords: InstanceRecords;
  runtime: ClusterRuntime;
  services: {
    accounts: AccountService;
    instances: InstanceService;
    accountWebhooks: AccountWebhookService;
    /** Undefined when HELPDESK_ENABLED is off (its endpoints answer 503). */
    helpdesk: HelpdeskService | undefined;
    /** Undefined when CHATBOT_ENABLED is off (its endpoints answer 503). */
    chatbot: ChatbotService | undefined;
  };
  security: {
    secrets: SecretBox;
    adminToken: string | undefined;
    /** Also accepted by GET /metrics besides the global token. */
    metricsToken: string | undefined;
    trustProxy: boolean;
    /** False when plain HTTP is acceptable (ALLOW_INSECURE_HTTP, or a loopback-only listener). */
    requireHttps: boolean;
    allowPrivateUrls: boolean;
  };
  limits: {
    maxBodyBytes: number;
    rateLimitPerMinute: number;
    rateLimitCreatePerMinute: number;
    helpdeskWebhookPerMinute: number;
    callTimeoutMs: number;
    /** What the node downloads for clients. */
    media: MediaConfig;
  };
  webhooks: {
    queue: DeliveryQueue;
    brokers: readonly BrokerTransport[];
    brokerStatus: () => Readonly<Record<string, BrokerStatus>>;
  };
  /** Received media: the storage and proxy endpoints, GET /api/chat/media. */
  receivedMedia: { blocks: BlockSettings; blobs: MediaBlobStore; storage: ObjectStorageClients };
}

/**
 * The Koa edge. Order matters: request id and error envelope first (so every failure is an envelope),
 * health before everything else, then the per-token rate limit (its headers go on every response, even
 * the HTTPS and CORS refusals), HTTPS, CORS, then the routes, each of which authenticates and checks
 * ownership before it acts.
 */
export function createApp(deps: AppDeps): Koa<AppState> {
  const app = new Koa<AppState>({ proxy: deps.security.trustProxy });
  const auth = createAuthenticator(deps.store, deps.security.adminToken, deps.instanceRecords);
  // Every node forgets a rotated, disabled or deleted credential at once; the cache's TTL bounds a lost news.
  deps.runtime.credentials
    .subscribe((change) => auth.forget(change))
    .catch((err: unknown) => {
      deps.node.logger.warn({ err }, 'cannot follow credential changes; cached tokens expire within a second');
    });

  const logRequests = deps.node.logger.isLevelEnabled('debug');
  app.use(async (ctx: AppContext, next) => {
    const state = startRequest(ctx, deps.node.logger);
    const started = performance.now();
    await next();
    if (!logRequests) return;
    state.log.debug(
      { method: ctx.method, path: ctx.path, status: ctx.status, ms: +(performance.now() - started).toFixed(2) },
      'request',
    );
  });
  app.use(errorEnvelope);
  const health = healthRoutes({
    nodeId: deps.node.nodeId,
    mode: deps.node.mode,
    checks: deps.node.healthChecks,
    log: deps.node.logger,
    brokers: deps.webhooks.brokerStatus,
  });
  app.use(routesUnderHeads(health));
  app.use(
    rateLimit(deps.runtime.rateLimiter, auth, {
      perMinute: deps.limits.rateLimitPerMinute,
      createPerMinute: deps.limits.rateLimitCreatePerMinute,
      helpdeskWebhookPerMinute: deps.limits.helpdeskWebhookPerMinute,
      metrics: deps.node.metrics,
    }),
  );
  if (deps.security.requireHttps) app.use(httpsOnly());
  app.use(cors(cachedKnownOrigins(() => deps.store.accounts.list())));

  const common = { auth, maxBodyBytes: deps.limits.maxBodyBytes };
  const actors = actorCaller(deps.runtime.router, deps.limits.callTimeoutMs);
  const actorRoutes = {
    ...common,
    runtime: deps.runtime,
    store: deps.store,
    actors,
    media: deps.limits.media,
  };
  // Every route is declared through an ApiRouter, so that GET /openapi.json lists them all (a test checks).
  let document: OpenApiDocument | undefined;
  const routers: ApiRouter[] = [
    docsRoutes(() => (document ??= openApiDocument([health, ...routers].flatMap((r) => r.routes)))),
    metricsRoutes({ auth, metricsToken: deps.security.metricsToken, metrics: deps.node.metrics }),
    settingsPanelRoutes(),
    consoleRoutes(),
    adminRoutes({ ...common, accounts: deps.services.accounts, actors }),
    accountRoutes({ ...common, accounts: deps.services.accounts }),
    accountWebhookRoutes({ ...common, store: deps.store, accountWebhooks: deps.services.accountWebhooks }),
    instanceRoutes({ ...common, instances: deps.services.instances, store: deps.store, actors }),
    instanceBlockRoutes({
      ...common,
      store: deps.store,
      actors,
      blocks: deps.receivedMedia.blocks,
    }),
    mediaRoutes({
      ...actorRoutes,
      secrets: deps.security.secrets,
      blobs: deps.receivedMedia.blobs,
      storage: deps.receivedMedia.storage,
    }),
    connectionRoutes(actorRoutes),
    eventRoutes({
      ...common,
      store: deps.store,
      secrets: deps.security.secrets,
      allowPrivateUrls: deps.security.allowPrivateUrls,
      ...deps.webhooks,
    }),
    brokerRoutes({
      ...common,
      store: deps.store,
      brokers: deps.webhooks.brokers,
    }),
    messageRoutes(actorRoutes),
    ...messageKindRoutes(actorRoutes),
    lookupRoutes(actorRoutes),
    statusRoutes(actorRoutes),
    groupRoutes(actorRoutes),
    groupChangeRoutes(actorRoutes),
    groupMemberRoutes(actorRoutes),
    profileRoutes(actorRoutes),
    privacyRoutes(actorRoutes),
    profileFieldRoutes(actorRoutes),
    labelRoutes(actorRoutes),
    historyRoutes(actorRoutes),
    chatRoutes(actorRoutes),
    callRoutes(actorRoutes),
    newsletterRoutes(actorRoutes),
    communityRoutes(actorRoutes),
    ...helpdeskRoutes({ ...common, store: deps.store, helpdesk: deps.services.helpdesk }),
    ...chatbotRoutes({ ...actorRoutes, chatbot: deps.services.chatbot }),
    websocketRoutes({ ...common, store: deps.store }),
    clusterRoutes({ ...actorRoutes, probeEnabled: deps.node.probeEnabled }),
    ...(deps.node.sandbox ? [sandboxRoutes(actorRoutes)] : []),
    mcpRoutes({ ...common, routes: () => routers.flatMap((r) => r.routes), version: packageVersion() }),
  ];
  app.use(dispatchRouters(routers));
  return app;
}
