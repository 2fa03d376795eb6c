import { NotOwnerError, UnavailableError } from '../errors.js';
import type {
  LinkChallenge,
  LinkRequest,
  MsgNetDriver,
  MsgNetSession,
  ProxySettings,
} from '../msgnet/msgnet-driver.js';
import type { MsgNetEvent } from '../msgnet/msgnet-events.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import { PROFILE_NAMESPACE } from '../store/namespaces.js';
import type { ConnectionInfo, ConnectionState, InstanceRecord, InstanceSettings } from '../store/records.js';
import type { SessionControl } from './actor-scope.js';
import type { ActorContext } from './instance-actor.js';
import { sessionStore } from './session-store.js';

export interface LifecycleDeps {
  driver: MsgNetDriver;
  secrets: SecretBox;
}

/** Where the session's events go, in order (event-pipeline.ts). */
export interface SessionReports {
  report(event: MsgNetEvent): void;
  /** Resolves once every event reported so far has been handled. */
  drained(): Promise<void>;
  /** Resolves once no event waits any more, those reported meanwhile included. */
  drainedQuiet(): Promise<void>;
}

/**
 * One actor's network session from activation to stop: opens it (resuming a saved link), connects, logs
 * out, reconnects and closes it, and keeps the instance record and settings the actor last read. A stop
 * that comes while the session is still opening closes it as soon as it exists.
 */
export class SessionLifecycle implements SessionControl {
  #session: MsgNetSession | undefined;
  #instance!: InstanceRecord;
  #settings!: InstanceSettings;
  #stopped = false;

  constructor(
    private readonly deps: LifecycleDeps,
    private readonly ctx: ActorContext,
    private readonly events: SessionReports,
    /** Told once a re-read configuration applies (the extensions'). */
    private readonly onConfigChanged: () => Promise<void>,
  ) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  /** @throws UnavailableError while the session is not open. */
  session(): MsgNetSession {
    if (!this.#session) throw new UnavailableError('Instance session is not open');
    return this.#session;
  }

  instance(): InstanceRecord {
    return this.#instance;
  }

  settings(): InstanceSettings {
    return this.#settings;
  }

  /** The connection the owner just stored, as the cached record's (events carry the record). */
  recordConnection(connection: ConnectionInfo): void {
    this.#instance = { ...this.#instance, connection };
  }

  /**
   * Whether this node still owns the instance: the lease on its own clock, and the store's epoch (a newer
   * one exists once another node claimed the instance, even if this node's lease has not run out).
   */
  async #stillOwner(): Promise<boolean> {
    if (this.#stopped) return false;
    try {
      this.ctx.assertOwner();
    } catch {
      return false;
    }
    const record = await this.ctx.store.instances.findById(this.ctx.instanceId);
    return record?.ownerEpoch === this.ctx.epoch;
  }

  /** Right before a side effect outside the store (a read receipt, a call rejection, a presence). */
  assertOwner(): void {
    if (this.#stopped) throw new NotOwnerError(this.ctx.instanceId);
    this.ctx.assertOwner();
  }

  /** Reads the instance, opens its session and resumes a saved link; resolves once its events are handled. */
  async start(): Promise<void> {
    const { ctx } = this;
    const instance = await ctx.store.instances.findById(ctx.instanceId);
    if (!instance) throw new NotOwnerError(ctx.instanceId);
    this.#instance = instance;
    this.#settings = instance.config.settings;
    this.#session = await this.deps.driver.open({
      instanceId: ctx.instanceId,
      auth: sessionStore(ctx),
      proxy: () => this.#proxy(this.#instance),
      settings: () => this.#settings,
      emit: (event) => this.events.report(event),
      log: ctx.log,
      epoch: ctx.epoch,
      awaySince: Date.parse(instance.connection.updatedAt) || Date.now(),
      stillOwner: () => this.#stillOwner(),
      // The actor's check, not `this.assertOwner`: a graceful stop still sends the receipts of what it drains.
      assertMayAct: () => this.ctx.assertOwner(),
    });
    // A connect that was waiting for a QR scan on the previous owner cannot continue here.
    const { state } = instance.connection;
    if (state === 'qr' || state === 'connecting') {
      this.events.report({ type: 'connection', state: 'disconnected', reason: 'owner changed' });
    }
    // Stopped while the session was opening: stop() found no session to close, so it is closed here.
    if (this.#stopped) {
      await this.#session.close();
      throw new NotOwnerError(ctx.instanceId);
    }
    await this.#session.resume();
    if (this.#stopped) {
      await this.#session.close();
      throw new NotOwnerError(ctx.instanceId);
    }
    await this.events.drained();
  }

  /**
   * Stops: on a graceful stop, the events the network already handed over are handled first (durably
   * queued and acknowledged, up to `drainMs`), since the network forgets what was acknowledged and
   * redelivers the rest to the next owner; then marks the actor stopped (later events are dropped, not
   * acknowledged), runs `beforeClose` (the extensions' stop) and closes the session.
   */
  async stop(beforeClose: () => Promise<void>, graceful: boolean, drainMs = 5000): Promise<void> {
    if (graceful && !this.#stopped) await this.#drainEvents(drainMs);
    this.#stopped = true;
    await beforeClose();
    await this.#session?.close();
  }

  /** Until no event is waiting (events reported while draining included), or `ms` passed. */
  async #drainEvents(ms: number): Promise<void> {
    const deadline = Date.now() + ms;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms)));
    try {
      while (Date.now() < deadline) {
        const settled = await Promise.race([this.events.drainedQuiet().then(() => true), timeout.then(() => false)]);
        if (settled) return;
      }
    } finally {
      clearTimeout(timer);
    }
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    const challenge = await this.session().connect(request);
    await this.events.drained();
    return challenge;
  }

  async logout(): Promise<ConnectionState> {
    await this.session().logout();
    // The next number linked here has its own profile.
    await this.ctx.clearOwned(PROFILE_NAMESPACE);
    await this.events.drained();
    return this.session().state;
  }

  async reconnect(): Promise<ConnectionState> {
    await this.session().reconnect();
    await this.events.drained();
    return this.session().state;
  }

  async applySettings(): Promise<boolean> {
    const instance = await this.ctx.store.instances.findById(this.ctx.instanceId);
    if (!instance) return false;
    const before = this.#settings;
    this.#settings = instance.config.settings;
    const session = this.session();
    if (session.state === 'connected' && before.keepOnlineStatus !== this.#settings.keepOnlineStatus) {
      await session.profile.setPresence(this.#settings.keepOnlineStatus);
    }
    // The token too: a rotated one goes out in the next webhook envelopes.
    this.#instance = {
      ...this.#instance,
      config: instance.config,
      tokenHash: instance.tokenHash,
      tokenSealed: instance.tokenSealed,
    };
    await this.onConfigChanged();
    return true;
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
}
