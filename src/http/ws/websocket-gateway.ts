import type { IncomingMessage, Server as HttpServer } from 'node:http';
import type { Server as HttpsServer } from 'node:https';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import type { RateLimiter } from '../../cluster/rate-limiter.js';
import type { WebSocketOptions } from '../../config/config.js';
import type { EventBus } from '../../events/event-bus.js';
import type { EventEnvelope } from '../../events/instance-events.js';
import type { CredentialNews } from '../../events/credential-news.js';
import type { AccountRecord, InstanceRecord, WebsocketConfig } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import type { Authenticator } from '../auth.js';
import { ConsoleStream, isConsoleStreamPath } from './console-stream.js';
import { beat, heartbeatTickMs, startHeartbeat } from './socket-heartbeat.js';
import type { Heartbeating } from './socket-heartbeat.js';
import { frameFor } from './ws-frames.js';
import { UpgradeGuard, WsMessage, jsonError, refuseUpgrade, wsInstanceName } from './upgrade-guard.js';
import type { SocketCredential } from './upgrade-guard.js';
import { UpgradeAcceptor } from './upgrade-acceptor.js';

/**
 * `GET /ws/:instance` (spec sections 4.10, 6, 7, 8) on one node.
 *
 * - Every check runs before the upgrade (UpgradeGuard); a refusal is a plain HTTP response.
 * - Each node subscribes once per instance to the instance's EventBus channel (Redis in cluster mode),
 *   shared by every socket of that instance on this node, and unsubscribes when the last one leaves; the
 *   subscription is live before the 101, so a client that sees `open` receives every later event.
 * - Each envelope is filtered by the instance's current WebSocket configuration, re-read from the store
 *   every `configRefreshMs` (a change applies without reconnecting), and sent as one text frame to every
 *   socket of the instance. Fire-and-forget: nothing is replayed.
 * - Client frames over 4096 bytes close the connection (`ws` sends close 1009, Message Too Big); the
 *   content of client frames is never read.
 * - The server pings every `pingIntervalMs`; a socket that has not answered a ping with a pong within
 *   `pongTimeoutMs` is dropped without a close frame (the client sees 1006).
 * - A socket with more than `maxBufferedBytes` waiting to be sent is unregistered at once and closed with
 *   1011; if it has not closed EVICT_GRACE_MS later, it is dropped (the client then sees 1006).
 * - The instance deleted while connected, and the node shutting down (`close()`): close 1001.
 * - The token the socket authenticated with rotated away, or its account disabled or deleted: close 4001,
 *   at once on every node (CredentialNews), or at the next refresh if that news was lost.
 * - `GET /console/stream` on the same listener is the operator console's account-wide stream
 *   (console-stream.ts), checked by the same guard.
 *
 * Wiring (src/node.ts), after the HTTP(S) server is created and before it listens:
 *
 *   const websockets = createWebSocketGateway({
 *     store, auth: createAuthenticator(store, config.adminToken), rateLimiter: runtime.rateLimiter,
 *     events: runtime.events, logger, requireHttps, trustProxy: config.trustProxy,
 *     allowedOrigins: config.allowedWsOrigins, rateLimitPerMinute: config.rateLimitPerMinute, ...config.websocket,
 *   });
 *   websockets.attach(server);
 *
 * and in `close()`, before `runtime.stop()` (the event subscriptions need the transport):
 *
 *   await websockets.close();
 */

/** Client frames larger than this close the connection (spec section 8). */
export const MAX_CLIENT_FRAME_BYTES = 4096;
/** How long a socket closed by the server may take to finish the closing handshake before it is cut. */
export const EVICT_GRACE_MS = 2000;

export interface WebSocketGatewayDeps extends WebSocketOptions {
  store: Store;
  auth: Authenticator;
  rateLimiter: RateLimiter;
  /** The runtime's event bus (`runtime.events`): envelopes of each instance, from its owner on any node. */
  events: EventBus<EventEnvelope>;
  /** Token and account changes from any node (`runtime.credentials`): revoked sockets close at once. */
  credentials: CredentialNews;
  logger: Logger;
  /** Plain HTTP is refused (not TLS, not loopback, not ALLOW_INSECURE_HTTP, no trusted proxy saying https). */
  requireHttps: boolean;
  trustProxy: boolean;
  /** ALLOWED_WS_ORIGINS. */
  allowedOrigins: readonly string[];
  /** The Global limit per token per minute (RATE_LIMIT_PER_MINUTE). */
  rateLimitPerMinute: number;
}

interface Client extends Heartbeating {
  readonly channel: InstanceChannel;
  readonly credential: SocketCredential;
}

/** The sockets of one instance on this node and their shared subscription. */
interface InstanceChannel {
  readonly instanceId: string;
  readonly accountId: string;
  readonly sockets: Set<Client>;
  /** Sockets plus upgrades in progress; the channel is dropped when this reaches 0. */
  refs: number;
  /** The instance's WebSocket configuration as last read. */
  config: WebsocketConfig | undefined;
  /** Resolves with the unsubscribe function once the subscription is live. */
  readonly subscribed: Promise<() => Promise<void>>;
}

type AnyServer = HttpServer | HttpsServer;

export class WebSocketGateway {
  readonly #acceptor: UpgradeAcceptor;
  readonly #guard: UpgradeGuard;
  /** `GET /console/stream`: the operator console's account-wide stream, on the same listener. */
  readonly #console: ConsoleStream;
  readonly #channels = new Map<string, InstanceChannel>();
  readonly #clients = new Set<Client>();
  readonly #unsubscribing = new Set<Promise<void>>();
  readonly #servers = new Set<AnyServer>();
  readonly #log: Logger;
  #heartbeat: NodeJS.Timeout | undefined;
  #refresher: NodeJS.Timeout | undefined;
  #refreshing = false;
  #credentialNews: Promise<() => Promise<void>> | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(private readonly deps: WebSocketGatewayDeps) {
    this.#log = deps.logger.child({ component: 'websocket' });
    this.#guard = new UpgradeGuard({ ...deps, logger: this.#log });
    this.#console = new ConsoleStream({
      ...deps,
      guard: this.#guard,
      logger: this.#log,
      maxClientFrameBytes: MAX_CLIENT_FRAME_BYTES,
      evictGraceMs: EVICT_GRACE_MS,
    });
    this.#acceptor = new UpgradeAcceptor(MAX_CLIENT_FRAME_BYTES);
  }

  /** Handles `upgrade` requests of this server: `/ws/:instance` and `/console/stream`; any other path gets 404. */
  attach(server: AnyServer): void {
    if (this.#closed) throw new Error('the WebSocket gateway is closed');
    server.on('upgrade', this.#onUpgrade);
    this.#servers.add(server);
    this.#startTimers();
  }

  /** Open sockets on this node (instance sockets; the console's are `consoleSize`). */
  get size(): number {
    return this.#clients.size;
  }

  /** Open operator-console streams on this node. */
  get consoleSize(): number {
    return this.#console.size;
  }

  /** Instances whose events this node forwards to console streams. */
  get consoleSubscriptions(): number {
    return this.#console.subscriptionCount;
  }

  /** Open sockets of one instance on this node. */
  clientCount(instanceId: string): number {
    return this.#channels.get(instanceId)?.sockets.size ?? 0;
  }

  /** Whether this node subscribes to the instance's events (it holds or is opening a socket for it). */
  isSubscribed(instanceId: string): boolean {
    return this.#channels.has(instanceId);
  }

  /**
   * Node shutdown: refuses new upgrades, closes every socket with 1001 (cut after EVICT_GRACE_MS), drops
   * the subscriptions. Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      clearInterval(this.#heartbeat);
      clearInterval(this.#refresher);
      await this.#credentialNews?.then((unsubscribe) => unsubscribe()).catch(() => undefined);
      for (const server of this.#servers) server.off('upgrade', this.#onUpgrade);
      this.#servers.clear();
      const consoleClosed = this.#console.close();
      const open = [...this.#clients].map((c) => c.ws);
      const closed = Promise.all(
        open.map(
          (ws) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r()))),
        ),
      );
      for (const client of [...this.#clients]) this.#closeClient(client, 1001, 'server shutting down');
      await Promise.race([closed, new Promise((r) => setTimeout(r, EVICT_GRACE_MS).unref())]);
      for (const ws of open) ws.terminate();
      await Promise.all([...this.#unsubscribing, consoleClosed]);
      this.#acceptor.close();
    })();
    return this.#closing;
  }

  #onUpgrade = (req: IncomingMessage, socket: Duplex, head: Buffer): void => {
    // A client that goes away during the checks must not crash the process.
    socket.on('error', (err) => this.#log.debug({ err }, 'websocket upgrade socket error'));
    this.#handleUpgrade(req, socket, head).catch((err: unknown) => {
      this.#log.error({ err }, 'websocket upgrade failed');
      refuseUpgrade(socket, { status: 500, headers: {}, body: jsonError('Internal server error', 'internal') });
    });
  };

  async #handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    const name = wsInstanceName(req.url);
    if (name === undefined && isConsoleStreamPath(req.url)) {
      await this.#console.handleUpgrade(req, socket, head);
      return;
    }
    if (name === undefined) {
      refuseUpgrade(socket, { status: 404, headers: {}, body: jsonError(WsMessage.NotFound, 'not_found') });
      return;
    }
    if (this.#closed) {
      refuseUpgrade(socket, { status: 503, headers: {}, body: jsonError(WsMessage.ShuttingDown, 'unavailable') });
      return;
    }
    const verdict = await this.#guard.check(req, name);
    if (!verdict.ok) {
      refuseUpgrade(socket, verdict);
      return;
    }
    if (this.#closed) {
      refuseUpgrade(socket, {
        status: 503,
        headers: verdict.headers,
        body: jsonError(WsMessage.ShuttingDown, 'unavailable'),
      });
      return;
    }
    const channel = this.#acquire(verdict.instance);
    try {
      await channel.subscribed;
    } catch (err) {
      this.#log.warn({ err, instance: name }, 'cannot subscribe to the instance events');
      this.#release(channel);
      refuseUpgrade(socket, {
        status: 503,
        headers: verdict.headers,
        body: jsonError(WsMessage.Unavailable, 'unavailable'),
      });
      return;
    }
    this.#acceptor.accept(req, socket, head, {
      headers: verdict.headers,
      closed: () => this.#closed,
      release: () => this.#release(channel),
      register: (ws) => this.#register(channel, ws, verdict.instance, verdict.credential),
    });
  }

  #acquire(instance: InstanceRecord): InstanceChannel {
    let channel = this.#channels.get(instance.id);
    if (!channel) {
      const created: InstanceChannel = {
        instanceId: instance.id,
        accountId: instance.accountId,
        sockets: new Set(),
        refs: 0,
        config: instance.config.websocket,
        subscribed: this.deps.events.subscribe(instance.id, (e) => this.#deliver(created, e)),
      };
      // A failed subscription is reported to the upgrades that wait for it; never unhandled.
      created.subscribed.catch(() => undefined);
      channel = created;
      this.#channels.set(instance.id, channel);
    } else {
      // The record was just read: the freshest configuration there is.
      channel.config = instance.config.websocket;
    }
    channel.refs++;
    return channel;
  }

  #release(channel: InstanceChannel): void {
    if (--channel.refs > 0) return;
    if (this.#channels.get(channel.instanceId) === channel) this.#channels.delete(channel.instanceId);
    const done = channel.subscribed
      .then((unsubscribe) => unsubscribe())
      .catch((err: unknown) => this.#log.debug({ err, instanceId: channel.instanceId }, 'unsubscribe failed'))
      .finally(() => this.#unsubscribing.delete(done));
    this.#unsubscribing.add(done);
  }

  #register(channel: InstanceChannel, ws: WebSocket, instance: InstanceRecord, credential: SocketCredential): void {
    const client: Client = startHeartbeat(ws, this.deps, { channel, credential });
    channel.sockets.add(client);
    this.#clients.add(client);
    // Client messages are not read (spec 4.10); `ws` enforces the frame limit and answers pings itself.
    ws.on('error', (err) => this.#log.debug({ err, instance: instance.name }, 'websocket error'));
    ws.on('close', (code) => {
      this.#log.debug({ instance: instance.name, code }, 'websocket closed');
      this.#unregister(client);
    });
    this.#log.debug({ instance: instance.name, sockets: channel.sockets.size }, 'websocket opened');
  }

  /** Removes a socket from its instance: it gets no more frames. Idempotent. */
  #unregister(client: Client): void {
    if (!client.channel.sockets.delete(client)) return;
    this.#clients.delete(client);
    this.#release(client.channel);
  }

  /** Unregisters and closes with `code`; cut without a close frame if still open after the grace. */
  #closeClient(client: Client, code: number, reason: string): void {
    this.#unregister(client);
    const { ws } = client;
    if (ws.readyState === WebSocket.CLOSED) return;
    this.#log.debug({ instanceId: client.channel.instanceId, code, reason }, 'closing websocket');
    ws.close(code);
    setTimeout(() => ws.terminate(), EVICT_GRACE_MS).unref();
  }

  #deliver(channel: InstanceChannel, envelope: EventEnvelope): void {
    if (channel.sockets.size === 0) return;
    const frame = frameFor(envelope, channel.config);
    if (!frame) return;
    for (const client of channel.sockets) {
      const { ws } = client;
      if (ws.readyState !== WebSocket.OPEN) continue;
      if (ws.bufferedAmount > this.deps.maxBufferedBytes) {
        this.#closeClient(client, 1011, 'send buffer full');
        continue;
      }
      ws.send(frame, { binary: false });
    }
  }

  #startTimers(): void {
    if (this.#heartbeat) return;
    this.#heartbeat = setInterval(() => this.#beat(), heartbeatTickMs(this.deps)).unref();
    this.#refresher = setInterval(() => void this.#refreshConfigs(), this.deps.configRefreshMs).unref();
    // A revocation closes the sockets at once; the periodic refresh catches any news that was lost.
    this.#credentialNews = this.deps.credentials.subscribe((change) => {
      for (const channel of this.#channels.values()) {
        const concerned =
          'instanceId' in change ? channel.instanceId === change.instanceId : channel.accountId === change.accountId;
        if (concerned) void this.#refreshOne(channel);
      }
    });
    this.#credentialNews.catch((err: unknown) => this.#log.warn({ err }, 'cannot follow credential changes'));
  }

  #beat(): void {
    beat(this.#clients, this.deps, (client) => {
      this.#log.debug({ instanceId: client.channel.instanceId }, 'websocket pong timeout');
      this.#unregister(client);
      client.ws.terminate();
    });
  }

  /** Re-reads each held instance: new configuration applies at once; a deleted instance closes with 1001. */
  async #refreshConfigs(): Promise<void> {
    if (this.#refreshing || this.#closed) return;
    this.#refreshing = true;
    try {
      const channels = [...this.#channels.values()];
      for (let i = 0; i < channels.length; i += 32) {
        await Promise.all(channels.slice(i, i + 32).map((c) => this.#refreshOne(c)));
      }
    } finally {
      this.#refreshing = false;
    }
  }

  /**
   * Re-reads the instance and its account: the new configuration applies at once, a deleted instance
   * closes its sockets with 1001, and a socket whose token was rotated away (or whose account was disabled
   * or deleted) closes with 4001.
   */
  async #refreshOne(channel: InstanceChannel): Promise<void> {
    let instance: InstanceRecord | undefined;
    let account: AccountRecord | undefined;
    try {
      instance = await this.deps.store.instances.findById(channel.instanceId);
      account = instance && (await this.deps.store.accounts.findById(instance.accountId));
    } catch (err) {
      this.#log.warn({ err, instanceId: channel.instanceId }, 'cannot re-read the websocket configuration');
      return;
    }
    if (!instance) {
      for (const client of [...channel.sockets]) this.#closeClient(client, 1001, 'instance deleted');
      return;
    }
    channel.config = instance.config.websocket;
    for (const client of [...channel.sockets]) {
      const { kind, tokenHash } = client.credential;
      const current = kind === 'instance' ? instance.tokenHash : account?.tokenHash;
      if (!account || account.disabledAt || current !== tokenHash) this.#closeClient(client, 4001, 'token revoked');
    }
  }
}

/** Builds the gateway of one node; `attach(server)` it to the node's HTTP(S) server. */
export function createWebSocketGateway(deps: WebSocketGatewayDeps): WebSocketGateway {
  return new WebSocketGateway(deps);
}
