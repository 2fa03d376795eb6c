import type { CacheStore, ConnectionState as WAConnectionUpdate, PossiblyExtendedCacheStore } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { NotConnectedError, TimeoutError, UnavailableError } from '../../errors.js';
import type { ConnectionState } from '../../store/records.js';
import type {
  Button,
  ChatLabels,
  EventCard,
  GroupInfo,
  LinkChallenge,
  LinkRequest,
  MsgNetSession,
  OutgoingMedia,
  PixPayment,
  PrivacyField,
  PrivacySettings,
  ProfileChanges,
  ProxySettings,
  SentMessage,
  SessionOptions,
  StatusPost,
} from '../msgnet-driver.js';
import type { ConnectionEvent, MsgNetEvent } from '../msgnet-events.js';
import { BaileysAuth } from './baileys-auth-state.js';
import { DEFAULT_BACKOFF, backoffDelay, decideDisconnect } from './disconnect-policy.js';
import type { BackoffOptions, DisconnectAction } from './disconnect-policy.js';
import { buttonsContent, eventCardContent, paymentContent } from './interactive-content.js';
import { STATUS_JID, digitsOf, toJid, userJid } from './jids.js';
import { LabelBook } from './label-book.js';
import type { OwnIdentity } from './message-mapper.js';
import * as out from './outgoing.js';
import { buildProxyAgents } from './proxy-agents.js';
import type { ProxyAgents } from './proxy-agents.js';
import { bindSocketEvents } from './socket-events.js';
import type { BaileysSocket, SocketFactory } from './socket-port.js';
import { StatusAudience } from './status-audience.js';
import { TtlCache } from './ttl-cache.js';

/** Caches shared by every socket of the driver (each socket would otherwise start its own, with timers). */
export interface SharedCaches {
  msgRetryCounterCache: CacheStore;
  userDevicesCache: PossiblyExtendedCacheStore;
  callOfferCache: CacheStore;
}

export interface BaileysSessionDeps {
  makeSocket: SocketFactory;
  caches: SharedCaches;
  /** Reconnect delays after transient closes. @default DEFAULT_BACKOFF */
  backoff?: BackoffOptions;
  /** @default Math.random */
  random?: () => number;
  /** How long `connect` waits for a QR or the open connection. @default 60000 */
  linkTimeoutMs?: number;
  /** @default buildProxyAgents */
  proxyAgents?: (proxy: ProxySettings) => ProxyAgents;
}

type LinkOutcome = { kind: 'qr'; qr: string } | { kind: 'open' };

interface LinkWaiter {
  resolve: (outcome: LinkOutcome) => void;
  reject: (err: unknown) => void;
  timer: NodeJS.Timeout;
}

export const OFFER_CALL_UNSUPPORTED = 'Ring-and-drop calls are not supported by the baileys driver';

/**
 * One instance's link to WhatsApp through Baileys, on its owner node. It owns at most one socket at a
 * time, replaces it after closes according to the disconnect policy, and persists the link only through
 * the fenced `AuthStore`.
 */
export class BaileysSession implements MsgNetSession {
  #state: ConnectionState = 'disconnected';
  #numberJid: string | undefined;
  #sock: BaileysSocket | undefined;
  #unbind: (() => void) | undefined;
  #auth: BaileysAuth | undefined;
  #labels: LabelBook | undefined;
  #audience: StatusAudience | undefined;
  #loading: Promise<BaileysAuth> | undefined;
  #proxy: ProxyAgents | undefined;
  #reconnectTimer: NodeJS.Timeout | undefined;
  #attempt = 0;
  #lastQr: string | undefined;
  readonly #waiters = new Set<LinkWaiter>();
  #closed = false;
  /** The store refused a write: another node owns the instance now, so this one stays quiet. */
  #ownershipLost = false;
  readonly #groupCache = new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 1_000 });
  readonly #callers = new Map<string, string>();
  readonly #log: Logger;

  constructor(
    private readonly o: SessionOptions,
    private readonly deps: BaileysSessionDeps,
  ) {
    this.#log = o.log.child({ instanceId: o.instanceId, driver: 'baileys' });
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get numberJid(): string | undefined {
    return this.#numberJid;
  }

  async resume(): Promise<void> {
    this.#assertUsable();
    const auth = await this.#ensureAuth();
    if (auth.registered && !this.#sock && !this.#closed) this.#startSocket();
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    this.#assertUsable();
    await this.#ensureAuth();
    if (this.#state === 'connected' && this.#sock && this.#numberJid) return { status: 'connected', numberJid: this.#numberJid };
    if (!this.#sock && !this.#startSocket()) throw new NotConnectedError();
    const outcome = await this.#waitLink();
    if (outcome.kind === 'open') return { status: 'connected', numberJid: this.#numberJid! };
    if (request.method === 'qr') return { status: 'qr', qrCode: outcome.qr };
    // The first QR proves the socket is up; only then does the server accept a pairing request.
    const sock = this.#sock;
    if (!sock) throw new NotConnectedError();
    const pairingCode = await sock.requestPairingCode(digitsOf(request.phoneNumber));
    return { status: 'pairing', pairingCode };
  }

  async logout(): Promise<void> {
    if (this.#closed) return;
    this.#cancelReconnect();
    // Detached first, so the 401 close that `logout` causes is not handled a second time.
    const sock = this.#detachSocket();
    if (sock) {
      try {
        await sock.logout();
      } catch (err) {
        this.#log.warn({ err }, 'logout request failed; forgetting the link anyway');
      } finally {
        await this.#endSocket(sock);
      }
    }
    await this.#clearAuth();
    this.#rejectWaiters(new NotConnectedError());
    this.#numberJid = undefined;
    this.#setState('loggedout', { reason: 'logged out' });
  }

  async reconnect(): Promise<void> {
    this.#assertUsable();
    await this.#ensureAuth();
    this.#attempt = 0;
    if (!this.#startSocket()) throw new NotConnectedError();
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    this.#cancelReconnect();
    const sock = this.#detachSocket();
    this.#rejectWaiters(new NotConnectedError());
    if (sock) await this.#endSocket(sock);
    // Queued writes land before the handoff completes; a fenced one fails fast.
    await this.#auth?.drain();
    await this.#proxy?.close().catch((err: unknown) => this.#log.warn({ err }, 'could not close the proxy agents'));
    this.#proxy = undefined;
    this.#groupCache.flushAll();
    this.#callers.clear();
  }

  async sendText(to: string, text: string): Promise<SentMessage> {
    return out.send(this.#socket(), toJid(to), { text });
  }

  async sendMedia(to: string, media: OutgoingMedia): Promise<SentMessage> {
    return out.send(this.#socket(), toJid(to), out.mediaContent(media));
  }

  async sendButtons(to: string, text: string, buttons: Button[]): Promise<SentMessage> {
    const jid = toJid(to);
    return out.relay(this.#socket(), jid, buttonsContent(jid, text, buttons));
  }

  async sendPayment(to: string, payment: PixPayment): Promise<SentMessage> {
    return out.relay(this.#socket(), toJid(to), paymentContent(payment));
  }

  async sendEventCard(to: string, card: EventCard): Promise<SentMessage> {
    const sock = this.#socket();
    const joinLink = card.joinLink || (await out.createCallLink(sock, card.video ? 'video' : 'audio', card.startTime)).url;
    return out.relay(sock, toJid(to), eventCardContent({ ...card, joinLink }));
  }

  async publishStatus(post: StatusPost): Promise<SentMessage> {
    const sock = this.#socket();
    return out.publishStatus(sock, post, this.#audience!.recipients(out.ownJid(sock)));
  }

  async deleteMessage(chatJid: string, messageId: string, fromMe: boolean): Promise<void> {
    const sock = this.#socket();
    const jid = toJid(chatJid);
    // A status revoke reaches only the list the status was sent to.
    const options = jid === STATUS_JID ? { statusJidList: this.#audience!.recipients(out.ownJid(sock)) } : undefined;
    await sock.sendMessage(jid, { delete: { remoteJid: jid, id: messageId, fromMe } }, options);
  }

  async markRead(chatJid: string, messageIds: string[], participant?: string): Promise<void> {
    const remoteJid = toJid(chatJid);
    await this.#socket().readMessages(
      messageIds.map((id) => ({ remoteJid, id, fromMe: false, ...(participant ? { participant } : {}) })),
    );
  }

  async setPresence(available: boolean): Promise<void> {
    await this.#socket().sendPresenceUpdate(available ? 'available' : 'unavailable');
  }

  async rejectCall(callId: string, from: string): Promise<void> {
    // The call-creator must be the address the offer came from, which may be a LID the event did not show.
    await this.#socket().rejectCall(callId, this.#callers.get(callId) ?? toJid(from));
    this.#callers.delete(callId);
  }

  async offerCall(_to: string, _seconds: number): Promise<{ callId: string }> {
    // No upstream API in any Baileys version; hand-built call stanzas are unofficial and draw bans.
    throw new UnavailableError(OFFER_CALL_UNSUPPORTED);
  }

  async createCallLink(kind: 'audio' | 'video', startTime?: number): Promise<{ token: string; url: string }> {
    return out.createCallLink(this.#socket(), kind, startTime);
  }

  async listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    return out.listGroups(this.#socket(), includeMembers, (group) => this.#groupCache.set(group.id, group));
  }

  async updateProfile(changes: ProfileChanges): Promise<void> {
    return out.updateProfile(this.#socket(), changes);
  }

  async getPrivacy(): Promise<PrivacySettings> {
    return out.getPrivacy(this.#socket());
  }

  async setPrivacy(field: PrivacyField, value: string): Promise<void> {
    return out.setPrivacy(this.#socket(), field, value);
  }

  async chatLabels(refresh: boolean): Promise<ChatLabels[]> {
    if (!refresh) {
      await this.#ensureAuth();
      return this.#labels!.list();
    }
    const sock = this.#socket();
    const labels = this.#labels!;
    labels.beginRebuild();
    let dropped: { chatJid: string; labelId: string }[] = [];
    try {
      // Without a stored version the server sends a full snapshot, not just the patches since the last sync.
      await sock.authState.keys.set({ 'app-state-sync-version': { regular: null } });
      await sock.resyncAppState(['regular'], true);
      dropped = labels.endRebuild(true);
    } catch (err) {
      labels.endRebuild(false);
      throw err;
    }
    for (const { chatJid, labelId } of dropped) {
      this.#emit({ type: 'labels', chatJid, labels: [{ id: labelId, name: labels.nameOf(labelId) }], action: 'remove', timestamp: Date.now() });
    }
    return labels.list();
  }

  async lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    return out.lookup(this.#socket(), number.includes('@') ? number : digitsOf(number));
  }

  // ---- connection lifecycle ----

  /** False when there is no auth to start with (it was just forgotten). */
  #startSocket(): boolean {
    const auth = this.#auth;
    const labels = this.#labels;
    const audience = this.#audience;
    if (!auth || !labels || !audience) return false;
    this.#cancelReconnect();
    const old = this.#detachSocket();
    // The old socket is ended and forgotten before the new one exists, or it leaks (listeners, timers).
    if (old) void this.#endSocket(old);
    const settings = this.o.settings();
    const proxy = this.#proxyAgents();
    const sock = this.deps.makeSocket({
      auth: auth.state,
      logger: this.#log.child({ component: 'baileys' }),
      // The actor applies `keepOnlineStatus` itself after each connect; Baileys' default would override it.
      markOnlineOnConnect: false,
      // History still syncs (PN↔LID mappings arrive with it); only the full backlog is not requested.
      syncFullHistory: !settings.disableHistorySync,
      msgRetryCounterCache: this.deps.caches.msgRetryCounterCache,
      userDevicesCache: this.deps.caches.userDevicesCache,
      callOfferCache: this.deps.caches.callOfferCache,
      cachedGroupMetadata: async (jid) => this.#groupCache.get(jid),
      getMessage: async () => undefined,
      ...(proxy ? { agent: proxy.agent, fetchAgent: proxy.fetchAgent, options: proxy.fetchOptions } : {}),
    });
    this.#sock = sock;
    const unbindEvents = bindSocketEvents(sock, {
      settings: this.o.settings,
      own: () => this.#own(),
      labels,
      audience,
      groupCache: this.#groupCache,
      callers: this.#callers,
      emit: (event) => this.#emit(event),
      log: this.#log,
      now: Date.now,
    });
    const onUpdate = (update: Partial<WAConnectionUpdate>): void => this.#onConnectionUpdate(sock, update);
    const onCreds = (): void => {
      auth.saveCreds().catch((err: unknown) => this.#log.error({ err }, 'could not store the link credentials'));
    };
    sock.ev.on('connection.update', onUpdate);
    sock.ev.on('creds.update', onCreds);
    this.#unbind = () => {
      unbindEvents();
      sock.ev.off('connection.update', onUpdate);
      sock.ev.off('creds.update', onCreds);
    };
    return true;
  }

  #onConnectionUpdate(sock: BaileysSocket, update: Partial<WAConnectionUpdate>): void {
    if (sock !== this.#sock || this.#closed) return;
    if (update.connection === 'connecting') this.#setState('connecting');
    if (update.qr) {
      this.#lastQr = update.qr;
      this.#setState('qr', { qrCode: update.qr }, true);
      this.#settleWaiters({ kind: 'qr', qr: update.qr });
    }
    if (update.connection === 'open') {
      this.#attempt = 0;
      this.#lastQr = undefined;
      this.#numberJid = sock.user?.id ? userJid(sock.user.id) : undefined;
      this.#setState('connected', {
        ...(this.#numberJid ? { numberJid: this.#numberJid } : {}),
        ...(sock.user?.name ? { profileName: sock.user.name } : {}),
      });
      this.#settleWaiters({ kind: 'open' });
    }
    if (update.connection === 'close') this.#onClose(decideDisconnect(update.lastDisconnect?.error));
  }

  #onClose(action: DisconnectAction): void {
    const old = this.#detachSocket();
    if (old) void this.#endSocket(old);
    if (action.kind === 'restart') {
      this.#startSocket();
      return;
    }
    if (action.kind === 'backoff') {
      this.#setState('disconnected', { reason: action.reason }, true);
      const delay = backoffDelay(this.#attempt++, this.deps.backoff ?? DEFAULT_BACKOFF, this.deps.random);
      this.#log.info({ delay, reason: action.reason }, 'connection closed; reconnecting after a delay');
      this.#reconnectTimer = setTimeout(() => {
        this.#reconnectTimer = undefined;
        if (!this.#closed && !this.#ownershipLost && !this.#sock) this.#startSocket();
      }, delay);
      return;
    }
    this.#log.warn({ reason: action.reason, state: action.state }, 'connection closed for good');
    this.#rejectWaiters(new NotConnectedError());
    void this.#stop(action);
  }

  async #stop(action: Extract<DisconnectAction, { kind: 'stop' }>): Promise<void> {
    if (action.clearAuth) {
      try {
        await this.#clearAuth();
      } catch (err) {
        this.#log.error({ err }, 'could not forget the link after a logout');
      }
    }
    if (action.state === 'loggedout') this.#numberJid = undefined;
    this.#setState(action.state, { reason: action.reason }, true);
  }

  #own(): OwnIdentity {
    const user = this.#sock?.user;
    return {
      jid: user?.id ? userJid(user.id) : undefined,
      lid: user?.lid ? userJid(user.lid) : undefined,
      name: user?.name,
    };
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
      this.#log.debug({ err }, 'error while ending a socket');
    }
  }

  #cancelReconnect(): void {
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = undefined;
  }

  #onOwnershipLost(err: unknown): void {
    if (this.#ownershipLost) return;
    this.#ownershipLost = true;
    this.#log.warn({ err }, 'the store refused a link write: this node no longer owns the instance');
    this.#cancelReconnect();
    const sock = this.#detachSocket();
    if (sock) void this.#endSocket(sock);
    this.#rejectWaiters(new NotConnectedError());
  }

  // ---- auth, waiters, events ----

  #ensureAuth(): Promise<BaileysAuth> {
    if (!this.#loading) {
      const loading = this.#loadAuth();
      this.#loading = loading;
      loading.catch(() => {
        if (this.#loading === loading) this.#loading = undefined;
      });
    }
    return this.#loading;
  }

  async #loadAuth(): Promise<BaileysAuth> {
    const auth = await BaileysAuth.load(this.o.auth, { onOwnershipLost: (err) => this.#onOwnershipLost(err) });
    const [labels, audience] = await Promise.all([LabelBook.load(auth, this.#log), StatusAudience.load(auth, this.#log)]);
    this.#auth = auth;
    this.#labels = labels;
    this.#audience = audience;
    return auth;
  }

  /** Forgets the link; the next connect starts from fresh creds. */
  async #clearAuth(): Promise<void> {
    const auth = this.#auth ?? (await this.#loading?.catch(() => undefined));
    this.#auth = undefined;
    this.#labels = undefined;
    this.#audience = undefined;
    this.#loading = undefined;
    if (auth) await auth.clear();
    else await this.o.auth.clear();
  }

  #proxyAgents(): ProxyAgents | undefined {
    if (!this.o.proxy) return undefined;
    this.#proxy ??= (this.deps.proxyAgents ?? buildProxyAgents)(this.o.proxy);
    return this.#proxy;
  }

  #waitLink(): Promise<LinkOutcome> {
    if (this.#lastQr) return Promise.resolve({ kind: 'qr', qr: this.#lastQr });
    if (this.#state === 'connected' && this.#numberJid) return Promise.resolve({ kind: 'open' });
    return new Promise<LinkOutcome>((resolve, reject) => {
      const waiter: LinkWaiter = {
        resolve,
        reject,
        timer: setTimeout(() => {
          this.#waiters.delete(waiter);
          reject(new TimeoutError());
        }, this.deps.linkTimeoutMs ?? 60_000),
      };
      this.#waiters.add(waiter);
    });
  }

  #settleWaiters(outcome: LinkOutcome): void {
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.resolve(outcome);
    }
    this.#waiters.clear();
  }

  #rejectWaiters(err: unknown): void {
    for (const waiter of this.#waiters) {
      clearTimeout(waiter.timer);
      waiter.reject(err);
    }
    this.#waiters.clear();
  }

  #setState(state: ConnectionState, extra: Omit<ConnectionEvent, 'type' | 'state'> = {}, always = false): void {
    if (state === this.#state && !always) return;
    this.#state = state;
    this.#emit({ type: 'connection', state, ...extra });
  }

  #emit(event: MsgNetEvent): void {
    if (this.#closed || this.#ownershipLost) return;
    try {
      this.o.emit(event);
    } catch (err) {
      this.#log.error({ err, type: event.type }, 'event listener failed');
    }
  }

  #socket(): BaileysSocket {
    this.#assertUsable();
    if (!this.#sock || this.#state !== 'connected') throw new NotConnectedError();
    return this.#sock;
  }

  #assertUsable(): void {
    if (this.#closed || this.#ownershipLost) throw new NotConnectedError();
  }
}
