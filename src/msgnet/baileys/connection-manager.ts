import { DisconnectReason } from '@whiskeysockets/baileys';
import type { ConnectionState as WAConnectionUpdate } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { NetworkUnreachableError, NotConnectedError } from '../../errors.js';
import type { ConnectionState } from '../../store/records.js';
import type { ProxySettings, SessionOptions } from '../msgnet-driver.js';
import type { ConnectionEvent, MsgNetEvent } from '../msgnet-events.js';
import type { ConnectPacer } from '../connect-pacer.js';
import { DEFAULT_BACKOFF, backoffDelay, decideDisconnect, statusCodeOf } from './disconnect-policy.js';
import type { BackoffOptions, DisconnectAction } from './disconnect-policy.js';
import { userJid } from './jids.js';
import { LinkWaiters } from './link-waiters.js';
import type { LinkOutcome } from './link-waiters.js';
import { buildProxyAgents } from './proxy-agents.js';
import type { ProxyAgents } from './proxy-agents.js';
import { loadSessionLink } from './session-link.js';
import type { SessionLink } from './session-link.js';
import { socketConfig } from './socket-config.js';
import type { SharedCaches } from './socket-config.js';
import { bindSocketEvents } from './socket-events.js';
import type { MediaDownloader } from './media-download.js';
import { NetworkAcks } from './network-acks.js';
import { SERVER_ACK_TIMEOUT_MS, ServerAcks, awaitingServerAcks } from './server-acks.js';
import type { NetworkEndpoint } from './network-endpoint.js';
import type { BaileysSocket, SocketFactory } from './socket-port.js';
import { TtlCache } from './ttl-cache.js';
import { BoundedMap } from '../../util/bounded-map.js';
import { systemClock } from '../../util/clock.js';
import type { Cancel, Clock } from '../../util/clock.js';

/** Keeps the caller map small: only calls still ringing need their raw address. */
const MAX_TRACKED_CALLS = 512;

export interface BaileysSessionDeps {
  makeSocket: SocketFactory;
  caches: SharedCaches;
  /** Reconnect delays after transient closes. @default DEFAULT_BACKOFF */
  backoff?: BackoffOptions;
  /** @default Math.random */
  random?: () => number;
  /** How long `connect` waits for a QR or the open connection. @default 60000 */
  linkTimeoutMs?: number;
  /** @default buildProxyAgents, internal proxy addresses refused */
  proxyAgents?: (proxy: ProxySettings) => ProxyAgents;
  /** @default downloadFromNetwork */
  downloadMedia?: MediaDownloader;
  /** A simulator instead of WhatsApp (WHATSAPP_WS_URL). */
  endpoint?: NetworkEndpoint;
  /** Reconnect delays and the link's deadline run on it. @default systemClock */
  clock?: Clock;
  /** The node's paced logins; unset = a login starts at once. */
  pacer?: ConnectPacer;
}

/**
 * The connection side of a session: at most one socket at a time, replaced after closes according to
 * the disconnect policy, and the link state (creds, keys, labels, audience) loaded from the `AuthStore`.
 */
export class ConnectionManager {
  #state: ConnectionState = 'disconnected';
  #numberJid: string | undefined;
  #sock: BaileysSocket | undefined;
  #unbind: (() => void) | undefined;
  #link: SessionLink | undefined;
  #loading: Promise<SessionLink> | undefined;
  #proxy: ProxyAgents | undefined;
  /** The proxy settings `#proxy` was built for. */
  #proxyKey: string | undefined;
  #reconnectTimer: Cancel | undefined;
  /** A login waiting for its turn in the pacer. */
  #pacedTurn: Cancel | undefined;
  /** Since when this session has been away from the network: its place in the pacer's queue. */
  #awaySince: number;
  #attempt = 0;
  #lastQr: string | undefined;
  #closed = false;
  /** The store refused a write: another node owns the instance now, so this one stays quiet. */
  #ownershipLost = false;
  readonly #waiters: LinkWaiters;
  /** `cachedGroupMetadata` for every socket of the session. */
  readonly groupCache = new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 1_000 });
  /** Raw caller address per ringing call id (events report the phone number). */
  readonly callers = new BoundedMap<string, string>(MAX_TRACKED_CALLS);
  /** Recent received messages that carry media, by id: downloading needs the raw message's keys. */
  readonly mediaMessages = new TtlCache({ ttlMs: 60 * 60_000, maxEntries: 256 });
  /**
   * The days of history a connect asked for on a new link (`?history=`), kept while this session lives:
   * the phone sends the history over the first minutes, across reconnects.
   */
  historyDays: number | undefined;

  constructor(
    private readonly options: SessionOptions,
    private readonly deps: BaileysSessionDeps,
    private readonly log: Logger,
  ) {
    this.#waiters = new LinkWaiters(deps.linkTimeoutMs ?? 60_000, deps.clock ?? systemClock);
    this.#awaySince = options.awaySince ?? Date.now();
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get numberJid(): string | undefined {
    return this.#numberJid;
  }

  /** The link, once `ensureLink` has loaded it. */
  get link(): SessionLink | undefined {
    return this.#link;
  }

  /** A socket exists, or one waits for its login turn. */
  get hasSocket(): boolean {
    return this.#sock !== undefined || this.#pacedTurn !== undefined;
  }

  /** The open socket; NotConnectedError unless connected. */
  socket(): BaileysSocket {
    this.assertUsable();
    if (!this.#sock || this.#state !== 'connected') throw new NotConnectedError();
    return this.#sock;
  }

  /** The current socket, open or not (a pairing request is made before it opens). */
  currentSocket(): BaileysSocket | undefined {
    return this.#sock;
  }

  assertUsable(): void {
    if (this.#closed || this.#ownershipLost) throw new NotConnectedError();
  }

  /** Resolves with the first QR of the socket, or once the link is open. */
  waitLink(): Promise<LinkOutcome> {
    if (this.#lastQr) return Promise.resolve({ kind: 'qr', qr: this.#lastQr });
    if (this.#state === 'connected' && this.#numberJid) return Promise.resolve({ kind: 'open' });
    return this.#waiters.wait();
  }

  /** Ends the socket after `before` (e.g. the logout request), forgets the link and reports loggedout. */
  async logout(before: (sock: BaileysSocket) => Promise<void>): Promise<void> {
    this.#cancelReconnect();
    // Detached first, so the 401 close that `logout` causes is not handled a second time.
    const sock = this.#detachSocket();
    if (sock) {
      try {
        await before(sock);
      } catch (err) {
        this.log.warn({ err }, 'logout request failed; forgetting the link anyway');
      } finally {
        await this.#endSocket(sock);
      }
    }
    await this.#forgetLink();
    this.#waiters.fail();
    this.#numberJid = undefined;
    this.#setState('loggedout', { reason: 'logged out' });
  }

  /** Ends everything; no event after it resolves. */
  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelReconnect();
    const sock = this.#detachSocket();
    this.#waiters.fail();
    if (sock) await this.#endSocket(sock);
    // Queued writes land before the handoff completes; a fenced one fails fast.
    await this.#link?.auth.drain();
    await this.#proxy?.close().catch((err: unknown) => this.log.warn({ err }, 'could not close the proxy agents'));
    this.#proxy = undefined;
    this.#proxyKey = undefined;
    this.groupCache.flushAll();
    this.callers.clear();
  }

  get closed(): boolean {
    return this.#closed;
  }

  emit(event: MsgNetEvent): void {
    if (this.#ownershipLost) return;
    // A message decrypted as the session closed still goes to the pipeline, which queues it if the actor stopped.
    if (this.#closed && event.type !== 'message') return;
    try {
      this.options.emit(event);
    } catch (err) {
      this.log.error({ err, type: event.type }, 'event listener failed');
    }
  }

  resetBackoff(): void {
    this.#attempt = 0;
  }

  /**
   * A login of the linked device, in its turn at the node's pacer (at once without one): the current
   * socket ends now, the new one starts when the turn comes. `urgent` (a client asked for it) goes ahead
   * of the sessions that reconnect on their own. False when there is no link.
   */
  requestLogin(urgent = false): boolean {
    const pacer = this.deps.pacer;
    if (!pacer) return this.startSocket();
    if (!this.#link) return false;
    this.#cancelReconnect();
    const old = this.#detachSocket();
    if (old) void this.#endSocket(old);
    this.#pacedTurn = pacer.request(urgent ? Number.NEGATIVE_INFINITY : this.#awaySince, () => {
      this.#pacedTurn = undefined;
      if (!this.#closed && !this.#ownershipLost && !this.#sock) this.startSocket();
    });
    // Waiting for its turn is connecting: a record left `connected` by the previous owner must not say so.
    this.#setState('connecting');
    return true;
  }

  /** A login waiting for its turn goes ahead of those that reconnect on their own (a client waits for it). */
  hurry(): void {
    if (this.#pacedTurn) this.requestLogin(true);
  }

  /** Replaces the socket by a new one on the same link at once; false when there is no link (just forgotten). */
  startSocket(): boolean {
    const link = this.#link;
    if (!link) return false;
    this.#cancelReconnect();
    const old = this.#detachSocket();
    // The old socket is ended and forgotten before the new one exists, or it leaks (listeners, timers).
    if (old) void this.#endSocket(old);
    const acks = new NetworkAcks(this.log);
    let alive = true;
    const made = this.deps.makeSocket(
      socketConfig({
        auth: link.auth,
        alive: () => alive,
        log: this.log,
        settings: this.options.settings(),
        historyDays: this.historyDays,
        caches: this.deps.caches,
        groupCache: this.groupCache,
        proxy: this.#proxyAgents(),
        endpoint: this.deps.endpoint,
        acks,
        sent: link.sent,
        epoch: this.options.epoch,
        assertMayAct: this.options.assertMayAct,
      }),
    );
    const serverAcks = new ServerAcks(systemClock, SERVER_ACK_TIMEOUT_MS, () => this.#unacked(sock));
    const { sock, detach: detachServerAcks } = awaitingServerAcks(made, serverAcks);
    this.#sock = sock;
    const unbindEvents = bindSocketEvents(sock, {
      settings: this.options.settings,
      labels: link.labels,
      audience: link.audience,
      contacts: link.contacts,
      historyDays: () => this.historyDays,
      polls: link.polls,
      sent: link.sent,
      groupCache: this.groupCache,
      callers: this.callers,
      mediaMessages: this.mediaMessages,
      acks,
      emit: (event) => this.emit(event),
      log: this.log,
      now: Date.now,
    });
    const onUpdate = (update: Partial<WAConnectionUpdate>): void => this.#onConnectionUpdate(sock, update);
    const onCreds = (): void => {
      link.auth.saveCreds().catch((err: unknown) => this.log.error({ err }, 'could not store the link credentials'));
    };
    sock.ev.on('connection.update', onUpdate);
    sock.ev.on('creds.update', onCreds);
    this.#unbind = () => {
      // Messages Baileys still holds in its event buffer reach the owner (or its salvage) before it drops them.
      flushEvents(sock, this.log);
      alive = false;
      // A receipt not sent by now never will be on this socket: the network redelivers the message.
      acks.close();
      // A send not acked by now may or may not have reached WhatsApp: its caller learns the outcome is unknown.
      detachServerAcks();
      unbindEvents();
      sock.ev.off('connection.update', onUpdate);
      sock.ev.off('creds.update', onCreds);
    };
    return true;
  }

  /** A send got no ack in time on the current socket: it is ended as lost, and the owner connects again. */
  #unacked(sock: BaileysSocket): void {
    if (sock !== this.#sock || this.#closed || this.#state !== 'connected') return;
    this.log.warn({ timeoutMs: SERVER_ACK_TIMEOUT_MS }, 'WhatsApp did not ack a message in time; reconnecting');
    const lost = Object.assign(new Error('no ack from WhatsApp in time'), {
      output: { statusCode: DisconnectReason.connectionLost },
    });
    void sock.end(lost);
  }

  #onConnectionUpdate(sock: BaileysSocket, update: Partial<WAConnectionUpdate>): void {
    if (sock !== this.#sock || this.#closed) return;
    if (update.connection === 'connecting') this.#setState('connecting');
    if (update.qr) {
      this.#lastQr = update.qr;
      this.#setState('qr', { qrCode: update.qr }, true);
      this.#waiters.settle({ kind: 'qr', qr: update.qr });
    }
    if (update.connection === 'open') {
      this.deps.pacer?.loggedIn();
      this.#attempt = 0;
      this.#lastQr = undefined;
      this.#numberJid = sock.user?.id ? userJid(sock.user.id) : undefined;
      this.#setState('connected', {
        ...(this.#numberJid ? { numberJid: this.#numberJid } : {}),
        ...(sock.user?.name ? { profileName: sock.user.name } : {}),
        business: businessAccount(sock.authState.creds.platform, sock.user?.name),
      });
      this.#waiters.settle({ kind: 'open' });
    }
    if (update.connection === 'close') {
      const code = statusCodeOf(update.lastDisconnect?.error);
      // rate-overlimit, or WhatsApp unavailable: the whole node waits, not just this session.
      if (code === 429 || code === 503) this.deps.pacer?.refused();
      if (this.#state === 'connected') this.#awaySince = Date.now();
      this.#onClose(decideDisconnect(update.lastDisconnect?.error));
    }
  }

  #onClose(action: DisconnectAction): void {
    const old = this.#detachSocket();
    if (old) void this.#endSocket(old);
    if (action.kind === 'restart') {
      this.startSocket();
      return;
    }
    if (action.kind === 'replaced') {
      this.#setState('disconnected', { reason: action.reason }, true);
      this.#reconnectAfter(0, action.reason);
      return;
    }
    if (action.kind === 'backoff') {
      this.#setState('disconnected', { reason: action.reason, ...(action.cause ? { error: action.cause } : {}) }, true);
      // A connect waiting for its QR learns at once that the network is out of reach; retries go on.
      if (action.cause) this.#waiters.fail(new NetworkUnreachableError(action.cause));
      const delay = backoffDelay(this.#attempt++, this.deps.backoff ?? DEFAULT_BACKOFF, this.deps.random);
      this.#reconnectAfter(delay, action.reason);
      return;
    }
    this.log.warn({ reason: action.reason, state: action.state }, 'connection closed for good');
    this.#waiters.fail();
    void this.#stop(action);
  }

  /**
   * A reconnect of the session's own: after `delay`, and only once the owner check says this node still
   * owns the instance (a stale owner's login would replace the owner's connection: WhatsApp keeps one
   * per device). A node that no longer owns it goes quiet for good.
   */
  #reconnectAfter(delay: number, reason: string): void {
    this.log.info({ delay, reason }, 'connection closed; reconnecting after a delay');
    this.#reconnectTimer = (this.deps.clock ?? systemClock).after(delay, () => {
      this.#reconnectTimer = undefined;
      void this.#reconnectIfOwner();
    });
  }

  async #reconnectIfOwner(): Promise<void> {
    const owner = this.options.stillOwner ? await this.options.stillOwner().catch(() => false) : true;
    if (!owner) {
      this.#onOwnershipLost(new Error('no longer the owner: not reconnecting'));
      return;
    }
    if (!this.#closed && !this.#ownershipLost && !this.#sock) this.requestLogin();
  }

  async #stop(action: Extract<DisconnectAction, { kind: 'stop' }>): Promise<void> {
    if (action.clearAuth) {
      try {
        await this.#forgetLink();
      } catch (err) {
        this.log.error({ err }, 'could not forget the link after a logout');
      }
    }
    if (action.state === 'loggedout') this.#numberJid = undefined;
    this.#setState(action.state, { reason: action.reason }, true);
  }

  /** Drops every reference to the current socket and unbinds our listeners; the caller ends it. */
  #detachSocket(): BaileysSocket | undefined {
    const sock = this.#sock;
    this.#sock = undefined;
    this.#lastQr = undefined;
    this.#unbind?.();
    this.#unbind = undefined;
    return sock;
  }

  async #endSocket(sock: BaileysSocket): Promise<void> {
    try {
      await sock.end(undefined);
    } catch (err) {
      this.log.debug({ err }, 'error while ending a socket');
    }
  }

  #cancelReconnect(): void {
    this.#reconnectTimer?.();
    this.#reconnectTimer = undefined;
    this.#pacedTurn?.();
    this.#pacedTurn = undefined;
  }

  #onOwnershipLost(err: unknown): void {
    if (this.#ownershipLost) return;
    this.#ownershipLost = true;
    this.log.warn({ err }, 'the store refused a link write: this node no longer owns the instance');
    this.#cancelReconnect();
    const sock = this.#detachSocket();
    if (sock) void this.#endSocket(sock);
    this.#waiters.fail();
  }

  /** The link's state could not be stored: the socket ends unanswered and a later one starts afresh. */
  #onWriteFailed(err: unknown): void {
    if (this.#closed || this.#ownershipLost || !this.#sock) return;
    this.log.warn({ err }, 'could not store the link state: dropping the connection until the store answers');
    const sock = this.#detachSocket();
    if (sock) void this.#endSocket(sock);
    this.#setState('disconnected', { reason: 'store unavailable' }, true);
    const delay = backoffDelay(this.#attempt++, this.deps.backoff ?? DEFAULT_BACKOFF, this.deps.random);
    this.#reconnectAfter(delay, 'store unavailable');
  }

  // ---- link state, waiting, events ----

  ensureLink(): Promise<SessionLink> {
    if (!this.#loading) {
      const hooks = {
        onOwnershipLost: (err: unknown) => this.#onOwnershipLost(err),
        onWriteFailed: (err: unknown) => this.#onWriteFailed(err),
      };
      const loading: Promise<SessionLink> = loadSessionLink(this.options.auth, this.log, hooks).then((link) => {
        // A link forgotten (logout) while it loaded is not revived.
        if (this.#loading === loading) this.#link = link;
        return link;
      });
      this.#loading = loading;
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined;
      });
    }
    return this.#loading;
  }

  /** Forgets the link; the next connect starts from fresh creds. */
  async #forgetLink(): Promise<void> {
    const link = this.#link ?? (await this.#loading?.catch(() => undefined));
    this.#link = undefined;
    this.#loading = undefined;
    if (link) await link.auth.clear();
    else await this.options.auth.clear();
  }

  /**
   * The agents of the instance's current proxy, built once per proxy: a proxy changed since the last
   * socket replaces them (the old ones close with the socket that used them).
   */
  #proxyAgents(): ProxyAgents | undefined {
    const wanted = this.options.proxy();
    const key = wanted ? JSON.stringify(wanted) : undefined;
    if (key !== this.#proxyKey) {
      const old = this.#proxy;
      this.#proxy = wanted
        ? (this.deps.proxyAgents ?? ((p: ProxySettings) => buildProxyAgents(p, { allowPrivate: false })))(wanted)
        : undefined;
      this.#proxyKey = key;
      old?.close().catch((err: unknown) => this.log.warn({ err }, 'could not close the previous proxy agents'));
    }
    return this.#proxy;
  }

  /** Baileys' fetch options for downloads: the proxy of the current socket (a changed one waits for the next). */
  downloadOptions(): RequestInit | undefined {
    return this.#proxy?.fetchOptions ?? this.deps.endpoint?.fetchOptions;
  }

  #setState(state: ConnectionState, extra: Omit<ConnectionEvent, 'type' | 'state'> = {}, always = false): void {
    if (state === this.#state && !always) return;
    this.#state = state;
    this.emit({ type: 'connection', state, ...extra });
  }
}

/** Hands Baileys' buffered events to the listeners still bound (a socket about to be forgotten). */
function flushEvents(sock: BaileysSocket, log: Logger): void {
  try {
    sock.ev.flush?.();
  } catch (err) {
    log.debug({ err }, 'could not flush the events of an ending socket');
  }
}

/**
 * The phone's app, as pair-success named it: WhatsApp Business on Android (`smba`) or iOS (`smbi`). A
 * business's push name is its business name.
 */
function businessAccount(platform: string | undefined, pushName: string | undefined) {
  const isBusiness = platform === 'smba' || platform === 'smbi';
  return { isBusiness, ...(isBusiness && pushName ? { name: pushName } : {}) };
}
