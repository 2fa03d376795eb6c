import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type Koa from 'koa';
import type { Config } from '../config/config.js';
import { createApp } from '../http/app.js';
import type { AppDeps } from '../http/app.js';
import type { AppState } from '../http/app-state.js';
import { CachingAuthenticator } from '../http/auth.js';
import { isLoopbackHost } from '../http/https-only.js';
import { createWebSocketGateway } from '../http/ws/websocket-gateway.js';
import type { WebSocketGateway } from '../http/ws/websocket-gateway.js';

export interface NodeHttp {
  app: Koa<AppState>;
  server: Server;
  websockets: WebSocketGateway;
}

/** Plain HTTP is refused unless TLS is on, it is allowed, or the listener is loopback-only. */
export const requiresHttps = (config: Config) =>
  !(config.tls || config.allowInsecureHttp || isLoopbackHost(config.host));

/** The Koa edge, its HTTP(S) server (not listening yet) and the WebSocket gateway on it. */
export function buildHttp(config: Config, deps: AppDeps): NodeHttp {
  const app = createApp(deps);
  app.on('error', (err: unknown) => deps.node.logger.debug({ err }, 'koa error'));
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
    store: deps.store,
    // No cache: the gateway re-checks open sockets' tokens on credential news and must read the store then.
    auth: new CachingAuthenticator(deps.store, config.adminToken, 0),
    rateLimiter: deps.runtime.rateLimiter,
    events: deps.runtime.events,
    credentials: deps.runtime.credentials,
    logger: deps.node.logger,
    requireHttps: deps.security.requireHttps,
    trustProxy: config.trustProxy,
    allowedOrigins: config.allowedWsOrigins,
    rateLimitPerMinute: config.rateLimitPerMinute,
    ...config.websocket,
  });
  websockets.attach(server);
  return { app, server, websockets };
}
