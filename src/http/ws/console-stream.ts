import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Logger } from 'pino';
import { WebSocket } from 'ws';
import type { RawData } from 'ws';
import type { EventBus } from '../../events/event-bus.js';
import type { EventEnvelope } from '../../events/instance-events.js';
import { safeEqual } from '../../security/tokens.js';
import type { AccountRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { AuthMessage } from '../auth.js';
import { beat, heartbeatTickMs, startHeartbeat } from './socket-heartbeat.js';
import type { Heartbeating } from './socket-heartbeat.js';
import { WsMessage, jsonError, refuseUpgrade } from './upgrade-guard.js';
import type { UpgradeGuard } from './upgrade-guard.js';
import { withoutMediaBase64 } from './ws-frames.js';
import { UpgradeAcceptor } from './upgrade-acceptor.js';

/**
 * `GET /console/stream` (WebSocket): the operator console's live view of every instance of one account.
 *
 * The spec's `/ws/:instance` is one socket per instance and only for instances whose WebSocket
 * configuration is enabled (that configuration belongs to the client's own integration, with its event
 * filter). The console needs every event of every instance of the account, whatever that configuration
 * says, so it has this one account-wide stream instead:
 *
 * - Checked before the upgrade by the gateway's UpgradeGuard: the token's Global rate-limit bucket, HTTPS,
 *   the same origin rule (same-origin or ALLOWED_WS_ORIGINS), and a TokenAccount (401/403 as elsewhere).
 * - The node that holds the socket subscribes to the existing per-instance event channels of the
 *   account's instances (one shared set per account on this node): the owners publish nothing extra,
 *   and a node without an open console does no work for it. The set is re-listed from the store every `configRefreshMs`, on
 *   every new stream and when a client sends `{"console":"refresh"}` (after it created or deleted one).
 * - Frames: each event envelope as the instance WebSocket sends it, without `instanceData.token` and
 *   media base64 (the console shows neither); and `{"console":"instances","account","instances":[names]}`
 *   once the subscriptions are live at the start, then whenever the set changes. A client that re-reads
 *   the list (GET /api/instance/list) after that frame misses no state change.
 * - The TokenAccount is re-checked at every re-list: once it is rotated, or the account is gone, the
 *   stream closes with 1008. Heartbeat, the 4096-byte client frame limit, the send-buffer limit and the
 *   shutdown close (1001) are those of the instance sockets.
 */

export const CONSOLE_STREAM_PATH = '/console/stream';

/** Sent when the subscriptions are live, then when the account's instances change. */
export interface InstancesFrame {
  console: 'instances';
  account: string;
  instances: string[];
}

export interface ConsoleStreamDeps {
  store: Store;
  events: EventBus<EventEnvelope>;
  guard: UpgradeGuard;
  logger: Logger;
  pingIntervalMs: number;
  pongTimeoutMs: number;
  maxBufferedBytes: number;
  /** How often each node re-lists the instances of the accounts it streams. */
  configRefreshMs: number;
  maxClientFrameBytes: number;
  /** How long a socket closed by the server may take to finish the closing handshake before it is cut. */
  evictGraceMs: number;
}

export function isConsoleStreamPath(rawUrl: string | undefined): boolean {
  try {
    return new URL(rawUrl ?? '/', 'http://localhost').pathname.replace(/\/$/, '') === CONSOLE_STREAM_PATH;
  } catch {
    return false;
  }
}

/** An envelope as the console receives it: no instance token, no embedded media. */
export function consoleFrame(envelope: EventEnvelope): Buffer {
  const { instance, baseUrl } = envelope.instanceData;
  return Buffer.from(JSON.stringify({ ...withoutMediaBase64(envelope), instanceData: { instance, baseUrl } }));
}

interface ConsoleClient extends Heartbeating {
  readonly watch: AccountWatch;
  /** The hash of the TokenAccount the stream was opened with. */
  readonly tokenHash: string;
}

interface Subscription {
  readonly name: string;
  readonly ready: Promise<() => Promise<void>>;
}

/** One account's streams on this node and their shared subscriptions. */
interface AccountWatch {
  readonly accountId: string;
  accountName: string;
  readonly clients: Set<ConsoleClient>;
  readonly subs: Map<string, Subscription>;
  /** Streams plus upgrades in progress; the watch is dropped when this reaches 0. */
  refs: number;
  dropped: boolean;
  /** The last instances frame (JSON), '' before the first successful listing. */
  announced: string;
  syncing: Promise<void> | undefined;
  /** A listing was asked for while one ran: run once more. */
  again: boolean;
}

export class ConsoleStream {
  readonly #acceptor: UpgradeAcceptor;
  readonly #watches = new Map<string, AccountWatch>();
  readonly #clients = new Set<ConsoleClient>();
  readonly #unsubscribing = new Set<Promise<void>>();
  readonly #log: Logger;
  #heartbeat: NodeJS.Timeout | undefined;
  #refresher: NodeJS.Timeout | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;

  constructor(private readonly options: ConsoleStreamDeps) {
    this.#log = options.logger.child({ stream: 'console' });
    this.#acceptor = new UpgradeAcceptor(options.maxClientFrameBytes);
  }

  /** Open console streams on this node. */
  get size(): number {
    return this.#clients.size;
  }

  /** Instances whose events this node currently forwards to console streams. */
  get subscriptionCount(): number {
    let n = 0;
    for (const watch of this.#watches.values()) n += watch.subs.size;
    return n;
  }

  async handleUpgrade(req: IncomingMessage, socket: Duplex, head: Buffer): Promise<void> {
    if (this.#closed) {
      refuseUpgrade(socket, { status: 503, headers: {}, body: jsonError(WsMessage.ShuttingDown, 'unavailable') });
      return;
    }
    const verdict = await this.options.guard.checkAccount(req);
    if (!verdict.ok) {
      refuseUpgrade(socket, verdict);
      return;
    }
    const watch = this.#acquire(verdict.account);
    try {
      await this.#sync(watch);
    } catch (err) {
      this.#log.warn({ err, account: verdict.account.name }, 'cannot list the account instances for a console stream');
      this.#release(watch);
      refuseUpgrade(socket, {
        status: 503,
        headers: verdict.headers,
        body: jsonError(WsMessage.Unavailable, 'unavailable'),
      });
      return;
    }
    if (watch.announced === '') {
      // The account went away between the token check and the listing.
      this.#release(watch);
      refuseUpgrade(socket, {
        status: 401,
        headers: verdict.headers,
        body: jsonError(AuthMessage.Invalid, 'unauthenticated'),
      });
      return;
    }
    this.#acceptor.accept(req, socket, head, {
      headers: verdict.headers,
      closed: () => this.#closed,
      release: () => this.#release(watch),
      register: (ws) => this.#register(watch, ws, verdict.account.tokenHash),
    });
  }

  /** Node shutdown: closes every stream with 1001 (cut after the grace) and drops the subscriptions. */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true;
      clearInterval(this.#heartbeat);
      clearInterval(this.#refresher);
      const open = [...this.#clients].map((c) => c.ws);
      const closed = Promise.all(
        open.map(
          (ws) => new Promise<void>((r) => (ws.readyState === WebSocket.CLOSED ? r() : ws.once('close', () => r()))),
        ),
      );
      for (const client of [...this.#clients]) this.#closeClient(client, 1001, 'server shutting down');
      await Promise.race([closed, new Promise((r) => setTimeout(r, this.options.evictGraceMs).unref())]);
      for (const ws of open) ws.terminate();
      await Promise.all([...this.#unsubscribing]);
      this.#acceptor.close();
    })();
    return this.#closing;
  }

  #acquire(account: AccountRecord): AccountWatch {
    let watch = this.#watches.get(account.id);
    if (!watch) {
      watch = {
        accountId: account.id,
        accountName: account.name,
        clients: new Set(),
        subs: new Map(),
        refs: 0,
        dropped: false,
        announced: '',
        syncing: undefined,
        again: false,
      };
      this.#watches.set(account.id, watch);
    }
    watch.refs++;
    return watch;
  }

  #release(watch: AccountWatch): void {
    if (--watch.refs > 0) return;
    watch.dropped = true;
    if (this.#watches.get(watch.accountId) === watch) this.#watches.delete(watch.accountId);
    for (const [id, sub] of watch.subs) this.#unsubscribe(id, sub);
    watch.subs.clear();
  }

  #unsubscribe(instanceId: string, sub: Subscription): void {
    const done = sub.ready
      .then((unsubscribe) => unsubscribe())
      .catch((err: unknown) => this.#log.debug({ err, instanceId }, 'console unsubscribe failed'))
      .finally(() => this.#unsubscribing.delete(done));
    this.#unsubscribing.add(done);
  }

  #register(watch: AccountWatch, ws: WebSocket, tokenHash: string): void {
    const client: ConsoleClient = startHeartbeat(ws, this.options, { watch, tokenHash });
    watch.clients.add(client);
    this.#clients.add(client);
    this.#startTimers();
    ws.on('message', (data: RawData, isBinary: boolean) => this.#onMessage(client, data, isBinary));
    ws.on('error', (err) => this.#log.debug({ err, account: watch.accountName }, 'console stream error'));
    ws.on('close', () => this.#unregister(client));
    ws.send(watch.announced, { binary: false });
    this.#log.debug({ account: watch.accountName, streams: watch.clients.size }, 'console stream opened');
  }

  /** The one client message: `{"console":"refresh"}`, a re-list now (coalesced per account). */
  #onMessage(client: ConsoleClient, data: RawData, isBinary: boolean): void {
    if (isBinary) return;
    let message: unknown;
    try {
      message = JSON.parse(
        Buffer.isBuffer(data) ? data.toString('utf8') : Buffer.concat(data as Buffer[]).toString('utf8'),
      );
    } catch {
      return;
    }
    if ((message as { console?: unknown } | null)?.console !== 'refresh') return;
    this.#sync(client.watch).catch((err: unknown) =>
      this.#log.warn({ err, account: client.watch.accountName }, 'console re-list failed'),
    );
  }

  #unregister(client: ConsoleClient): void {
    if (!client.watch.clients.delete(client)) return;
    this.#clients.delete(client);
    this.#release(client.watch);
  }

  #closeClient(client: ConsoleClient, code: number, reason: string): void {
    this.#unregister(client);
    const { ws } = client;
    if (ws.readyState === WebSocket.CLOSED) return;
    this.#log.debug({ account: client.watch.accountName, code, reason }, 'closing console stream');
    ws.close(code, reason);
    setTimeout(() => ws.terminate(), this.options.evictGraceMs).unref();
  }

  /** Lists the account's instances and subscribes to the new ones; concurrent asks share one run. */
  #sync(watch: AccountWatch): Promise<void> {
    if (watch.syncing) {
      watch.again = true;
      return watch.syncing;
    }
    const run = (async () => {
      try {
        do {
          watch.again = false;
          await this.#syncOnce(watch);
        } while (watch.again && !watch.dropped);
      } finally {
        watch.syncing = undefined;
      }
    })();
    watch.syncing = run;
    return run;
  }

  async #syncOnce(watch: AccountWatch): Promise<void> {
    const [account, instances] = await Promise.all([
      this.options.store.accounts.findById(watch.accountId),
      this.options.store.instances.listByAccount(watch.accountId),
    ]);
    if (watch.dropped) return;
    for (const client of [...watch.clients]) {
      if (!account || !safeEqual(client.tokenHash, account.tokenHash)) {
        this.#closeClient(client, 1008, 'token no longer valid');
      }
    }
    if (!account) return;
    watch.accountName = account.name;
    const live = new Map(instances.map((i) => [i.id, i.name]));
    for (const [id, sub] of [...watch.subs]) {
      if (live.has(id)) continue;
      watch.subs.delete(id);
      this.#unsubscribe(id, sub);
    }
    const added: Array<[string, Subscription]> = [];
    for (const [id, name] of live) {
      if (watch.subs.has(id)) continue;
      const sub: Subscription = {
        name,
        ready: this.options.events.subscribe(id, (e) => this.#deliver(watch, e)),
      };
      sub.ready.catch(() => undefined);
      watch.subs.set(id, sub);
      added.push([id, sub]);
    }
    const results = await Promise.allSettled(added.map(([, sub]) => sub.ready));
    const failed = added.filter((_, i) => results[i]!.status === 'rejected');
    // Dropped so that the next listing subscribes again; the instance is not announced until then.
    for (const [id, sub] of failed) if (watch.subs.get(id) === sub) watch.subs.delete(id);
    if (failed.length > 0) throw new Error(`could not subscribe to ${failed.length} instance channel(s)`);
    if (watch.dropped) return;
    const frame: InstancesFrame = { console: 'instances', account: account.name, instances: [...live.values()].sort() };
    const text = JSON.stringify(frame);
    if (text === watch.announced) return;
    watch.announced = text;
    for (const client of watch.clients) this.#send(client, text);
  }

  #deliver(watch: AccountWatch, envelope: EventEnvelope): void {
    if (watch.clients.size === 0 || typeof envelope?.event !== 'string' || !envelope.instanceData) return;
    const frame = consoleFrame(envelope);
    for (const client of [...watch.clients]) this.#send(client, frame);
  }

  #send(client: ConsoleClient, frame: Buffer | string): void {
    const { ws } = client;
    if (ws.readyState !== WebSocket.OPEN) return;
    if (ws.bufferedAmount > this.options.maxBufferedBytes) {
      this.#closeClient(client, 1011, 'send buffer full');
      return;
    }
    ws.send(frame, { binary: false });
  }

  #startTimers(): void {
    if (this.#heartbeat || this.#closed) return;
    this.#heartbeat = setInterval(() => {
      beat(this.#clients, this.options, (client) => {
        this.#unregister(client);
        client.ws.terminate();
      });
    }, heartbeatTickMs(this.options)).unref();
    this.#refresher = setInterval(() => {
      for (const watch of this.#watches.values()) {
        if (watch.syncing) continue;
        this.#sync(watch).catch((err: unknown) =>
          this.#log.warn({ err, account: watch.accountName }, 'console re-list failed'),
        );
      }
    }, this.options.configRefreshMs).unref();
  }
}
