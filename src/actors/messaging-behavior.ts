import type { Logger } from 'pino';
import { setTimeout as sleep } from 'node:timers/promises';
import { NotOwnerError, StoreUnavailableError, UnavailableError, isOwnershipLoss } from '../errors.js';
import { retryDelay } from '../util/retry-delay.js';
import { instanceState, toInstanceEvent } from '../events/instance-events.js';
import type { EventAttachments, InstanceEvent } from '../events/instance-events.js';
import { withReceivedMedia } from '../events/received-media.js';
import type { ReceivedMediaPipeline } from '../events/received-media.js';
import type { MsgNetDriver, MsgNetSession, ProxySettings } from '../msgnet/msgnet-driver.js';
import type { MsgNetEvent, NormalizedMessage } from '../msgnet/msgnet-events.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { PROFILE_NAMESPACE } from '../store/namespaces.js';
import type { InstanceRecord, InstanceSettings, MessageStatus } from '../store/records.js';
import { mergeHandlers } from './instance-actor.js';
import type { ActorBehavior, ActorContext, CallHandlers } from './instance-actor.js';
import type { ActorPayload, ActorResult } from './actor-calls.js';
import type { ExtensionEnv, InstanceExtension, InstanceExtensionFactory } from './instance-extension.js';
import { applyEdit, historyRecord, remember } from './message-history.js';
import { chatHandlers } from './chat-handlers.js';
import { BoundedMap } from '../util/bounded-map.js';
import { channelHandlers } from './channel-handlers.js';
import { idempotencyHandlers, pruneIdempotencyRecords } from './idempotency-records.js';
import { networkHandlers } from './network-handlers.js';
import type { NetworkHost } from './network-handlers.js';
import { groupHandlers } from './group-handlers.js';
import { sessionStore } from './session-store.js';
import type { InstanceEventSink } from '../events/instance-event-sink.js';

export interface MessagingDeps {
  driver: MsgNetDriver;
  secrets: SecretBox;
  sink: InstanceEventSink;
  /** Modules that run beside messaging in every actor (chatbot, helpdesk). */
  extensions?: InstanceExtensionFactory[];
  /** Received files: download, object storage, base64 for the consumers that ask (media/received-media.ts). */
  media?: ReceivedMediaPipeline;
}

interface RunningExtension {
  extension: InstanceExtension;
  /** This extension's message queue: in order, independent of the others. */
  chain: Promise<void>;
}

/**
 * The messaging part of an instance actor: opens the network session on activation (resuming a saved
 * link), persists connection changes under the owner's epoch, applies the seven settings to what the
 * network reports, and emits the API events. Network events are handled one after another, in order.
 */
export class MessagingBehavior implements NetworkHost, ExtensionEnv {
  #session: MsgNetSession | undefined;
  #instance!: InstanceRecord;
  #settings!: InstanceSettings;
  #chain: Promise<void> = Promise.resolve();
  /** Network events whose handling failed (lost ownership, or an error), for the sandbox's acknowledgements. */
  #unhandled = 0;
  #ctx!: ActorContext;
  #stopped = false;
  /** Clients' labels (`source`) of messages being sent, by id, until their outgoing event leaves. */
  readonly #sources = new BoundedMap<string, string>(1024);
  readonly #extensions: RunningExtension[];

  constructor(
    private readonly deps: MessagingDeps,
    instanceId: string,
  ) {
    this.#extensions = (deps.extensions ?? []).map((factory) => ({
      extension: factory.create(instanceId),
      chain: Promise.resolve(),
    }));
  }

  get ctx(): ActorContext {
    return this.#ctx;
  }

  log(): Logger {
    return this.#ctx.log;
  }

  session(): MsgNetSession {
    return this.#requireSession();
  }

  instance(): InstanceRecord {
    return this.#instance;
  }

  settings(): InstanceSettings {
    return this.#settings;
  }

  emit(event: InstanceEvent): Promise<void> {
    return this.#emit(event);
  }

  drained(): Promise<void> {
    return this.#drained();
  }

  afterEvents<T>(run: () => T): Promise<T> {
    return this.#afterEvents(run);
  }

  setProfileName(name: string): Promise<void> {
    return this.#setProfileName(name);
  }

  labelSource(messageId: string, source: string): void {
    this.#sources.set(messageId, source);
  }

  /** The actor's own instance of the extension made by `deps.extensions[index]`. */
  extension(index: number): InstanceExtension {
    return this.#extensions[index]!.extension;
  }

  async onActivate(ctx: ActorContext): Promise<void> {
    this.#ctx = ctx;
    const instance = await ctx.store.instances.findById(ctx.instanceId);
    if (!instance) throw new NotOwnerError(ctx.instanceId);
    this.#instance = instance;
    this.#settings = instance.config.settings;
    this.#session = await this.deps.driver.open({
      instanceId: ctx.instanceId,
      auth: sessionStore(ctx),
      proxy: () => this.#proxy(this.#instance),
      settings: () => this.#settings,
      emit: (event) => this.#enqueue(event),
      log: ctx.log,
    });
    // A connect that was waiting for a QR scan on the previous owner cannot continue here.
    const { state } = instance.connection;
    if (state === 'qr' || state === 'connecting') {
      this.#enqueue({ type: 'connection', state: 'disconnected', reason: 'owner changed' });
    }
    // Stopped while the session was opening: onStop found no session to close, so it is closed here.
    if (this.#stopped) {
      await this.#session.close();
      throw new NotOwnerError(ctx.instanceId);
    }
    await this.#session.resume();
    if (this.#stopped) {
      await this.#session.close();
      throw new NotOwnerError(ctx.instanceId);
    }
    await this.#drained();
    for (const e of this.#extensions) await e.extension.onActivate?.(this);
  }

  async onStop(): Promise<void> {
    this.#stopped = true;
    for (const e of this.#extensions) {
      await e.extension.onStop?.();
      await e.chain;
    }
    await this.#session?.close();
  }

  /** Hands a message to every extension's own queue (a failure there is logged, never thrown here). */
  #notify(message: NormalizedMessage): void {
    for (const e of this.#extensions) {
      if (!e.extension.onMessage) continue;
      e.chain = e.chain
        .then(() => (this.#stopped ? undefined : e.extension.onMessage?.(message, this)))
        .catch((err: unknown) => {
          if (!isOwnershipLoss(err)) {
            this.#ctx.log.error({ err, message: message.id }, 'extension failed on a message');
          }
        });
    }
  }

  #proxy(instance: InstanceRecord): ProxySettings | undefined {
    const p = instance.config.proxy;
    if (!p?.enabled) return undefined;
    return {
      protocol: p.protocol,
      host: p.host,
      port: Number(p.port),
      user: p.user,
      password: p.passwordSealed ? this.deps.secrets.open(p.passwordSealed, SecretPurpose.ProxyPassword) : undefined,
    };
  }

  #requireSession(): MsgNetSession {
    if (!this.#session) throw new UnavailableError('Instance session is not open');
    return this.#session;
  }

  #enqueue(event: MsgNetEvent): void {
    this.#chain = this.#chain
      .then(() => this.#handle(event))
      .catch((err: unknown) => {
        this.#unhandled++;
        if (!isOwnershipLoss(err)) this.#ctx.log.error({ err, event: event.type }, 'event handling failed');
      });
  }

  /**
   * Runs something that makes the network report events (a sandbox injection) and answers only once they
   * are durably handled: the simulated network counts a message as delivered when the owner has queued it,
   * so a 200 is never an event this owner lost (its lease ran out meanwhile). Otherwise 503, which the
   * contact's side sees as "not delivered".
   */
  async #afterEvents<T>(run: () => T): Promise<T> {
    const before = this.#unhandled;
    const result = run();
    await this.#drained();
    if (this.#unhandled > before || this.#stopped) {
      throw new UnavailableError('The network event could not be handled here; the instance is moving to another node');
    }
    return result;
  }

  /** Resolves once every network event reported so far has been handled. */
  #drained(): Promise<void> {
    return this.#chain;
  }

  /** Caches a push name the instance just set, in order with the connection events that also write it. */
  async #setProfileName(name: string): Promise<void> {
    const done = this.#chain.then(async () => {
      const connection = { ...this.#instance.connection, profileName: name, updatedAt: new Date().toISOString() };
      await this.#ctx.setConnection(connection);
      this.#instance = { ...this.#instance, connection };
    });
    this.#chain = done.catch(() => undefined);
    await done;
  }

  /**
   * An event accepted from the network leaves only while this node surely owns the instance (a node
   * resumed after SIGSTOP must not act for it), and is retried until it is durably queued.
   */
  async #emit(event: InstanceEvent, attachments?: EventAttachments): Promise<void> {
    const stillOwner = () => {
      if (this.#stopped) throw new NotOwnerError(this.#ctx.instanceId);
      this.#ctx.assertOwner();
    };
    stillOwner();
    await this.deps.sink.emit(this.#instance, event, attachments, stillOwner);
  }

  /**
   * While the store is out, the event being handled (and every one behind it, in order) waits for it, for
   * as long as this node owns the instance: events are held, never dropped.
   */
  async #untilStored(write: () => Promise<void>): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await write();
        return;
      } catch (err) {
        if (!(err instanceof StoreUnavailableError)) throw err;
        this.#beforeSideEffect();
        if (attempt === 0) this.#ctx.log.warn({ err }, 'store unavailable: events wait for it');
        await sleep(retryDelay(attempt));
      }
    }
  }

  /** Right before a side effect outside the store (a read receipt, a call rejection, a presence). */
  #beforeSideEffect(): void {
    if (this.#stopped) throw new NotOwnerError(this.#ctx.instanceId);
    this.#ctx.assertOwner();
  }

  async #handle(e: MsgNetEvent): Promise<void> {
    if (this.#stopped) return;
    const session = this.#requireSession();
    switch (e.type) {
      case 'connection': {
        const before = this.#instance.connection;
        // The last failure to reach the network stays shown until a connection succeeds.
        const lastError = e.state === 'connected' ? undefined : (e.error ?? before.lastError);
        const connection = {
          state: e.state,
          numberJid: e.state === 'loggedout' ? undefined : (e.numberJid ?? before.numberJid),
          updatedAt: new Date().toISOString(),
          ...(e.profileName
            ? { profileName: e.profileName }
            : before.profileName
              ? { profileName: before.profileName }
              : {}),
          ...(lastError ? { lastError } : {}),
        };
        await this.#untilStored(() => this.#ctx.setConnection(connection));
        this.#instance = { ...this.#instance, connection };
        if (before.state !== e.state) await this.#emit(instanceState(this.#instance.name, e.state));
        if (e.state === 'connected' && this.#settings.keepOnlineStatus) {
          this.#beforeSideEffect();
          await session.setPresence(true);
        }
        return;
      }
      case 'message': {
        const m = e.message;
        if (!m.fromMe && m.chat.type === 'group' && this.#settings.ignoreGroupMessages) return;
        if (m.chat.type === 'status' && this.#settings.ignoreStatus) return;
        // A received file is downloaded (stored, kept for base64) first; a failure is only noted in the event.
        const media = await this.deps.media?.receive(this.#instance, m, session, this.#ctx.log);
        // Stored before the event leaves, so that a client reacting to it finds it in the history.
        await remember(this.#ctx.store, historyRecord(this.#ctx.instanceId, m, media?.stored), this.#ctx.log);
        if (!m.fromMe && m.edit) {
          await applyEdit(this.#ctx.store, this.#ctx.instanceId, m.edit.messageId, m.edit.text, this.#ctx.log);
        }
        const source = this.#sources.get(m.id) ?? 'api';
        this.#sources.delete(m.id);
        const event = toInstanceEvent(e, source);
        await this.#emit(media ? withReceivedMedia(event, media) : event, media?.attachments);
        this.#notify(m);
        if (!m.fromMe && this.#settings.autoReadMessages && m.chat.type !== 'status') {
          this.#beforeSideEffect();
          await session.markRead(m.chat.jid, [m.id], m.chat.type === 'group' ? m.sender.jid : undefined);
          await this.#recordStatus([m.id], 'read');
        }
        return;
      }
      case 'delivery': {
        await this.#recordStatus(e.messageIds, e.status);
        await this.#emit(toInstanceEvent(e));
        return;
      }
      case 'call': {
        await this.#emit(toInstanceEvent(e));
        if (e.status === 'offer' && this.#settings.autoRejectCalls) {
          this.#beforeSideEffect();
          await session.rejectCall(e.callId, e.from);
          if (this.#settings.callRejectMessage) {
            this.#beforeSideEffect();
            await session.sendText(e.from, this.#settings.callRejectMessage);
          }
        }
        return;
      }
      default:
        await this.#emit(toInstanceEvent(e));
    }
  }

  /** Where messages got to, for GET /api/chat/status; a failure only loses that, never the event. */
  async #recordStatus(ids: string[], status: MessageStatus): Promise<void> {
    await this.#ctx.store.messages.setStatus(this.#ctx.instanceId, ids, status).catch((err: unknown) => {
      this.#ctx.log.warn({ err, ids }, 'could not record a message status');
    });
  }

  /** `msgnet.connect`: a QR or pairing challenge, or the link resumed. */
  async connect(request: ActorPayload<'msgnet.connect'>): Promise<ActorResult<'msgnet.connect'>> {
    const challenge = await this.#requireSession().connect(request);
    await this.#drained();
    return challenge;
  }

  async logout(ctx: ActorContext): Promise<ActorResult<'msgnet.logout'>> {
    await this.#requireSession().logout();
    // The next number linked here has its own profile.
    await ctx.clearOwned(PROFILE_NAMESPACE);
    await this.#drained();
    return { state: this.#requireSession().state };
  }

  async downloadMedia(ctx: ActorContext, messageId: string): Promise<ActorResult<'media.download'>> {
    if (!this.deps.media) throw new UnavailableError('Received media is not available on this node');
    const file = await this.deps.media.downloadRecorded(
      this.#requireSession(),
      await ctx.store.messages.find(ctx.instanceId, messageId),
    );
    return {
      base64: file.data.toString('base64'),
      mimetype: file.mimetype,
      ...(file.fileName ? { fileName: file.fileName } : {}),
    };
  }

  async reconnect(): Promise<ActorResult<'msgnet.reconnect'>> {
    await this.#requireSession().reconnect();
    await this.#drained();
    return { state: this.#requireSession().state };
  }

  async applySettings(ctx: ActorContext): Promise<ActorResult<'settings.apply'>> {
    const instance = await ctx.store.instances.findById(ctx.instanceId);
    if (!instance) return { applied: false };
    const before = this.#settings;
    this.#settings = instance.config.settings;
    const session = this.#requireSession();
    if (session.state === 'connected' && before.keepOnlineStatus !== this.#settings.keepOnlineStatus) {
      await session.setPresence(this.#settings.keepOnlineStatus);
    }
    // The token too: a rotated one goes out in the next webhook envelopes.
    this.#instance = {
      ...this.#instance,
      config: instance.config,
      tokenHash: instance.tokenHash,
      tokenSealed: instance.tokenSealed,
    };
    for (const e of this.#extensions) await e.extension.onConfigChanged?.(this);
    return { applied: true };
  }
}

/**
 * The calls messaging and its extensions answer: one table per node, each handler finding the actor's own
 * behaviour from its context (per-actor tables would cost every idle instance a hundred closures).
 */
function messagingHandlers(deps: MessagingDeps, of: (ctx: ActorContext) => MessagingBehavior): CallHandlers {
  return mergeHandlers(
    ...(deps.extensions ?? []).map((factory, i) => factory.handlers?.((ctx) => of(ctx).extension(i)) ?? {}),
    networkHandlers(of),
    chatHandlers(of),
    channelHandlers(of),
    groupHandlers(of),
    idempotencyHandlers(),
    {
      'msgnet.connect': (ctx, request) => of(ctx).connect(request),
      'msgnet.logout': (ctx) => of(ctx).logout(ctx),
      'media.download': (ctx, { messageId }) => of(ctx).downloadMedia(ctx, messageId),
      'msgnet.reconnect': (ctx) => of(ctx).reconnect(),
      'settings.apply': (ctx) => of(ctx).applySettings(ctx),
    },
  );
}

/** The messaging part of a node's actors: `create` makes one actor's, all sharing one handler table. */
export function messagingBehavior(deps: MessagingDeps): {
  create(instanceId: string): Pick<ActorBehavior, 'onActivate' | 'onStop'>;
  handlers: CallHandlers;
} {
  const running = new WeakMap<ActorContext, MessagingBehavior>();
  const of = (ctx: ActorContext) => {
    const messaging = running.get(ctx);
    if (!messaging) throw new NotOwnerError(ctx.instanceId);
    return messaging;
  };
  return {
    handlers: messagingHandlers(deps, of),
    create(instanceId) {
      const messaging = new MessagingBehavior(deps, instanceId);
      return {
        onActivate: async (ctx) => {
          running.set(ctx, messaging);
          await pruneIdempotencyRecords(ctx);
          await messaging.onActivate(ctx);
        },
        onStop: () => messaging.onStop(),
      };
    },
  };
}
