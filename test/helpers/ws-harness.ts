import { randomBytes } from 'node:crypto';
import { createServer, request } from 'node:http';
import type { IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { WebSocket } from 'ws';
import type { ClientOptions, RawData } from 'ws';
import { loadConfig } from '../../src/config/config.js';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { createAuthenticator } from '../../src/http/auth.js';
import { createWebSocketGateway } from '../../src/http/ws/websocket-gateway.js';
import type { WebSocketGateway, WebSocketGatewayDeps } from '../../src/http/ws/websocket-gateway.js';
import { ADMIN_TOKEN } from './test-node.js';
import type { TestNode } from './test-node.js';

/**
 * WebSocket test harness for in-process nodes.
 *
 * PENDING THE NODE WIRING: `RunningNode` does not expose an http.Server or a gateway yet, so the harness
 * serves the gateway from its own `http.createServer()` built on the node's `store` and `runtime` (the
 * same store, authenticator, rate limiter and event bus the node's HTTP API uses). Once node.ts wires
 * the gateway and RunningNode exposes it as `websockets` (the proposed change), `gatewayFor(node)` uses
 * the node's own listener and gateway instead, and the same tests run against the real wiring.
 */

export interface GatewayHarness {
  gateway: WebSocketGateway;
  /** `ws://host:port` of the listener that serves `/ws/:instance`. */
  wsUrl: string;
  /** `http://host:port` of the same listener (for raw upgrade requests and same-origin Origins). */
  httpUrl: string;
  close(): Promise<void>;
}

/** The WS_* / ALLOWED_WS_ORIGINS / RATE_LIMIT_PER_MINUTE part of an environment, as the node reads it. */
export function gatewayOptionsFromEnv(env: Record<string, string>) {
  const config = loadConfig({ PORT: '0', DATA_DIR: '/nonexistent', LOG_LEVEL: 'silent', ...env });
  return {
    allowedOrigins: config.allowedWsOrigins,
    rateLimitPerMinute: config.rateLimitPerMinute,
    ...config.websocket,
  };
}

/**
 * A gateway for `node`: the node's own when it has one (proposed `RunningNode.websockets`), else a
 * separate listener. `env` must be the environment the node was started with (for the WS options);
 * `overrides` replace dependencies (a private rate limiter, HTTPS required, a trusted proxy…) and force
 * a separate listener.
 */
export async function gatewayFor(
  node: TestNode,
  env: Record<string, string>,
  overrides: Partial<WebSocketGatewayDeps> = {},
): Promise<GatewayHarness> {
  const wired = (node as unknown as { websockets?: WebSocketGateway }).websockets;
  if (wired && Object.keys(overrides).length === 0) {
    return { gateway: wired, wsUrl: node.url.replace(/^http/, 'ws'), httpUrl: node.url, close: async () => undefined };
  }
  const server: Server = createServer((_req, res) => {
    res.statusCode = 404;
    res.end();
  });
  const gateway = createWebSocketGateway({
    store: node.store,
    auth: createAuthenticator(node.store, ADMIN_TOKEN),
    rateLimiter: node.runtime.rateLimiter,
    events: node.runtime.events,
    credentials: node.runtime.credentials,
    logger: pino({ level: process.env.TEST_LOG_LEVEL ?? 'silent' }),
    requireHttps: false,
    trustProxy: false,
    ...gatewayOptionsFromEnv(env),
    ...overrides,
  });
  gateway.attach(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  return {
    gateway,
    wsUrl: `ws://127.0.0.1:${port}`,
    httpUrl: `http://127.0.0.1:${port}`,
    async close() {
      await gateway.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface RawUpgradeResponse {
  status: number;
  headers: IncomingHttpHeaders;
  text: string;
  // Tests read arbitrary JSON.
  body: any;
}

/**
 * Sends a WebSocket upgrade request and reports the HTTP answer: the refusal (status, headers, body) or
 * 101 (the socket is closed at once).
 */
export function rawUpgrade(
  httpUrl: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<RawUpgradeResponse> {
  return new Promise((resolve, reject) => {
    const req = request(httpUrl + path, {
      headers: {
        Connection: 'Upgrade',
        Upgrade: 'websocket',
        'Sec-WebSocket-Version': '13',
        'Sec-WebSocket-Key': randomBytes(16).toString('base64'),
        ...headers,
      },
    });
    req.on('response', (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => {
        let body: unknown;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          body = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, body });
      });
    });
    req.on('upgrade', (res, socket) => {
      socket.destroy();
      resolve({ status: res.statusCode ?? 0, headers: res.headers, text: '', body: undefined });
    });
    req.on('error', reject);
    req.end();
  });
}

/** A WebSocket client that records every frame and how it closed. */
export class TestClient {
  readonly envelopes: EventEnvelope[] = [];
  readonly raw: string[] = [];
  pings = 0;
  close: { code: number; reason: string } | undefined;
  readonly closed: Promise<{ code: number; reason: string }>;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data: RawData) => {
      const text = Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.from(data as ArrayBuffer).toString('utf8');
      this.raw.push(text);
      this.envelopes.push(JSON.parse(text) as EventEnvelope);
    });
    ws.on('ping', () => this.pings++);
    ws.on('error', () => undefined);
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.close = { code, reason: reason.toString() };
        resolve(this.close);
      }),
    );
  }

  /** Opens `url` and resolves once open; rejects with the HTTP status if the upgrade is refused. */
  static open(url: string, options: ClientOptions = {}): Promise<TestClient> {
    const ws = new WebSocket(url, { perMessageDeflate: false, ...options });
    const client = new TestClient(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(client));
      ws.once('unexpected-response', (_req, res) => {
        reject(new Error(`upgrade refused with ${res.statusCode}`));
        res.resume();
        ws.terminate();
      });
      ws.once('error', reject);
    });
  }

  events(name: string): EventEnvelope[] {
    return this.envelopes.filter((e) => e.event === name);
  }

  /** Resolves when the connection has closed, failing after `ms`. */
  async closedWithin(ms: number): Promise<{ code: number; reason: string }> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        this.closed,
        new Promise<never>((_r, reject) => {
          timer = setTimeout(() => reject(new Error(`connection still open after ${ms} ms`)), ms);
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
