import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import { AppError, ErrorCode, NotOwnerError, OutcomeUnknownError, TimeoutError, errorFromWire } from '../errors.js';
import type { ActorCallKind, ActorPayload, ActorResult, IdempotencyTag } from '../actors/actor-calls.js';
import type { KeyedCall } from '../actors/instance-actor.js';
import type { CallMetrics } from '../metrics/metrics.js';
import { channels } from '../redis/keys.js';
import { DeliveryMemory } from '../transport/delivery-memory.js';
import type { HostedActor, HostedActors } from './actor-host.js';
import type { OwnerDirectory } from './owner-directory.js';
import type { Membership } from './membership.js';
import { DeadlineTimer } from './deadline-timer.js';
import { placeInstance } from './placement.js';
import type { Transport } from '../transport/transport.js';
import { systemClock } from '../util/clock.js';
import type { Clock } from '../util/clock.js';

/** A routed call on the wire (node → owner's inbox). */
interface CallMessage {
  t: 'call';
  id: string;
  from: string;
  instanceId: string;
  kind: ActorCallKind;
  payload: unknown;
  timeoutMs: number;
  /** The sender found no owner and chose this node by placement: take the lease if it is free. */
  activate: boolean;
  /** The front end's request, so that the owner's log lines name it too. */
  requestId?: string;
  /** A call for a request with an Idempotency-Key: the owner runs it at most once. */
  idempotent?: IdempotencyTag;
}

/** One call as the router carries it from attempt to attempt; `timeoutMs` is what is left of its deadline. */
interface Outgoing<K extends ActorCallKind> {
  instanceId: string;
  kind: K;
  payload: ActorPayload<K>;
  timeoutMs: number;
  requestId: string | undefined;
  idempotent: KeyedCall | undefined;
}

/** A hint that an instance was just released for this node to take (handoff). */
interface ActivateMessage {
  t: 'activate';
  instanceId: string;
}

interface Pending {
  /** Told when the owner answers a keyed call with its recorded outcome. */
  onReplayed: (() => void) | undefined;
  resolve: (v: unknown) => void;
  reject: (e: unknown) => void;
  /** The clock's time at which the call ends with 504. */
  deadline: number;
  instanceId: string;
}

type ReplyMessage =
  | { t: 'reply'; id: string; ok: true; result: unknown; replayed?: true }
  | { t: 'reply'; id: string; ok: false; code: string; message: string };

export interface RouterOptions {
  nodeId: string;
  host: HostedActors;
  directory: OwnerDirectory;
  membership: Membership;
  transport: Transport;
  log: Logger;
  /** How long a known owner is trusted before asking the directory again. @default 1000 */
  ownerCacheMs: number;
  /** Pause before the one retry after a "not owner" answer. @default 100 */
  retryDelayMs: number;
  metrics?: CallMetrics;
  /** Deadlines, the retry's pause and the owner cache run on it. @default systemClock */
  clock?: Clock;
}

/**
 * Routes a call to the actor of an instance, wherever it lives. Local owner: a direct call, no Redis
 * hop. Remote owner: PUBLISH to its inbox with a request id and the reply channel, and wait for the reply
 * within the deadline. No owner: the placement node is asked to activate it (or this node does, if it
 * is the placement node). A "not owner" answer refreshes the owner and retries once.
 */
export class Router {
  readonly #pending = new Map<string, Pending>();
  readonly #clock: Clock;
  readonly #deadlines: DeadlineTimer;
  /** Call ids: unique per process (the prefix), so a late reply to an earlier run of this node matches nothing. */
  readonly #idPrefix = `${randomUUID()}:`;
  #nextId = 0;
  readonly #owners = new Map<string, { node: string; at: number }>();
  readonly #serving = new Set<Promise<void>>();
  /** The calls this node took from its inbox: each runs once, however often it arrives. */
  readonly #taken = new DeliveryMemory();
  #unsubscribeInbox: (() => Promise<void>) | undefined;
  #unsubscribeReply: (() => Promise<void>) | undefined;

  /**
   * A call that reached an owner's inbox may have run, so it is never sent again: it ends with the owner's
   * reply or at its deadline (504, outcome unknown). A node that leaves the membership keeps answering what
   * it accepted until it has released each lease, so its departure fails nothing here. The one retry is
   * kept for answers that prove the call did not run: "not owner" from the owner, or nobody listening.
   */
  constructor(private readonly options: RouterOptions) {
    this.#clock = options.clock ?? systemClock;
    this.#deadlines = new DeadlineTimer((now) => this.#expire(now), this.#clock);
  }

  async start(): Promise<void> {
    this.#unsubscribeInbox = await this.options.transport.subscribe(channels.inbox(this.options.nodeId), (raw) =>
      this.#onInbox(raw),
    );
    this.#unsubscribeReply = await this.options.transport.subscribe(channels.reply(this.options.nodeId), (raw) =>
      this.#onReply(raw),
    );
  }

  /** Takes no more calls, lets the ones being served reply, then stops listening for replies. */
  async stop(): Promise<void> {
    await this.#unsubscribeInbox?.();
    await Promise.allSettled([...this.#serving]);
    await this.#unsubscribeReply?.();
    // Sent and unanswered: they may have run, so the outcome is unknown (504), never a retry.
    for (const id of [...this.#pending.keys()]) this.#take(id)?.reject(new TimeoutError());
    this.#deadlines.stop();
  }

  /** Runs the call on the owner; `requestId`, the request it serves, goes with it into the owner's logs. */
  async call<K extends ActorCallKind>(
    instanceId: string,
    kind: K,
    payload: ActorPayload<K>,
    timeoutMs = 30_000,
    requestId?: string,
    idempotent?: KeyedCall,
  ): Promise<ActorResult<K>> {
    const started = this.#clock.now();
    const deadline = started + timeoutMs;
    let outcome: string = 'ok';
    try {
      try {
        return await this.#attempt({ instanceId, kind, payload, timeoutMs, requestId, idempotent });
      } catch (err) {
        // Only "not owner" proves that the call did not run; anything else may follow a side effect.
        if (!(err instanceof NotOwnerError)) throw err;
        this.#owners.delete(instanceId);
        await new Promise<void>((resolve) => this.#clock.after(this.options.retryDelayMs, resolve));
        await this.options.membership.refresh().catch(() => undefined);
        const left = deadline - this.#clock.now();
        if (left <= 0) throw new TimeoutError();
        return await this.#attempt({ instanceId, kind, payload, timeoutMs: left, requestId, idempotent });
      }
    } catch (err) {
      outcome = err instanceof AppError ? err.code : ErrorCode.Internal;
      throw err;
    } finally {
      // Where the actor is now is where the call ran (a move in the middle of a call is rare enough).
      this.options.metrics?.routedCall(
        this.options.host.get(instanceId) ? 'local' : 'remote',
        outcome,
        (this.#clock.now() - started) / 1000,
      );
    }
  }

  /** Calls the actor only if some node runs it (never activates); undefined when nobody owns it. */
  async callIfOwned<K extends ActorCallKind>(
    instanceId: string,
    kind: K,
    payload: ActorPayload<K>,
    timeoutMs = 30_000,
    requestId?: string,
    idempotent?: KeyedCall,
  ): Promise<ActorResult<K> | undefined> {
    if (!this.options.host.get(instanceId) && (await this.#ownerOf(instanceId)) === undefined) return undefined;
    return this.call(instanceId, kind, payload, timeoutMs, requestId, idempotent);
  }

  #attempt<K extends ActorCallKind>(call: Outgoing<K>): Promise<ActorResult<K>> {
    const local = this.options.host.get(call.instanceId);
    if (local) return local.call(call.kind, call.payload, call.timeoutMs, call.requestId, call.idempotent);
    // A known owner is sent to at once: no lookup, no extra turn of the microtask queue.
    const cached = this.#cachedOwner(call.instanceId);
    if (cached !== undefined && cached !== this.options.nodeId) {
      return this.#send(cached, call, false) as Promise<ActorResult<K>>;
    }
    return this.#attemptLookingUp(call);
  }

  async #attemptLookingUp<K extends ActorCallKind>(call: Outgoing<K>): Promise<ActorResult<K>> {
    const { instanceId } = call;
    let owner = await this.#ownerOf(instanceId);
    let activate = false;
    if (owner === undefined || owner === this.options.nodeId) {
      owner =
        placeInstance(
          instanceId,
          this.options.membership.liveNodes().map((n) => n.nodeId),
        ) ?? this.options.nodeId;
      activate = true;
    }
    if (owner === this.options.nodeId) {
      const actor = await this.#activateHere(instanceId);
      return actor.call(call.kind, call.payload, call.timeoutMs, call.requestId, call.idempotent);
    }
    return (await this.#send(owner, call, activate)) as ActorResult<K>;
  }

  /**
   * Takes the instance here. Held by another live node instead (its hint lost, say, with a restarted
   * Redis): the hint is written again, so that the caller's retry goes there, and the call is refused.
   */
  async #activateHere(instanceId: string): Promise<HostedActor> {
    const report = await this.options.host.activateMany([instanceId]);
    const actor = this.options.host.get(instanceId);
    if (actor) return actor;
    const holder = report.busy[0]?.node;
    if (holder !== undefined && holder !== this.options.nodeId) {
      await this.options.directory.record([instanceId], holder).catch(() => undefined);
    }
    throw new NotOwnerError(instanceId);
  }

  #cachedOwner(instanceId: string): string | undefined {
    const cached = this.#owners.get(instanceId);
    return cached && this.#clock.now() - cached.at < this.options.ownerCacheMs ? cached.node : undefined;
  }

  async #ownerOf(instanceId: string): Promise<string | undefined> {
    const cached = this.#cachedOwner(instanceId);
    if (cached !== undefined) return cached;
    const [node] = await this.options.directory.lookup([instanceId]);
    if (node) this.#owners.set(instanceId, { node, at: this.#clock.now() });
    else this.#owners.delete(instanceId);
    return node;
  }

  /**
   * Publishes the call to the owner's inbox and returns the promise of its reply, which the caller awaits
   * at once (so a rejection while the publish is in flight is never unhandled).
   */
  #send(node: string, call: Outgoing<ActorCallKind>, activate: boolean): Promise<unknown> {
    const { instanceId, kind, payload, timeoutMs, requestId, idempotent } = call;
    const id = this.#idPrefix + (this.#nextId++).toString(36);
    const msg: CallMessage = {
      t: 'call',
      id,
      from: this.options.nodeId,
      instanceId,
      kind,
      payload,
      timeoutMs,
      activate,
    };
    if (requestId !== undefined) msg.requestId = requestId;
    if (idempotent !== undefined) msg.idempotent = idempotent.tag;
    // Encoded before the call is pending: a payload that cannot be encoded fails here, leaving nothing behind.
    const wire = JSON.stringify(msg);
    const deadline = this.#clock.now() + timeoutMs;
    const reply = new Promise<unknown>((resolve, reject) => {
      this.#pending.set(id, { resolve, reject, deadline, instanceId, onReplayed: idempotent?.onReplayed });
    });
    this.#deadlines.add(deadline);
    this.options.transport.publish(channels.inbox(node), wire).then(
      (receivers) => {
        // Nobody listens on that inbox: the node is gone, so its leases are about to lapse.
        if (receivers === 0) this.#take(id)?.reject(new NotOwnerError(instanceId));
      },
      (err: unknown) => {
        // Redis away. The command may still have reached the inbox (ioredis resends after a reconnect):
        // the call may run, so it is never retried here.
        this.options.log.warn({ err, instanceId }, 'could not route a call; its outcome is unknown');
        this.#take(id)?.reject(
          new OutcomeUnknownError('Cluster coordination failed while routing the request; its outcome is unknown'),
        );
      },
    );
    return reply;
  }

  /** Removes a pending call to settle it; undefined once it has been answered or has timed out. */
  #take(id: string): Pending | undefined {
    const p = this.#pending.get(id);
    if (p) this.#pending.delete(id);
    return p;
  }

  /** Ends the calls whose deadline has passed (504); returns the earliest deadline left. */
  #expire(now: number): number {
    let next = Number.POSITIVE_INFINITY;
    for (const [id, p] of this.#pending) {
      if (p.deadline - now < 1) {
        this.#pending.delete(id);
        p.reject(new TimeoutError());
      } else if (p.deadline < next) next = p.deadline;
    }
    return next;
  }

  #onReply(raw: string): void {
    const msg = JSON.parse(raw) as ReplyMessage;
    const p = this.#take(msg.id);
    if (!p) return;
    if (msg.ok) {
      if (msg.replayed) p.onReplayed?.();
      p.resolve(msg.result);
    } else p.reject(errorFromWire(msg.code, msg.message, p.instanceId));
  }

  #onInbox(raw: string): void {
    const msg = JSON.parse(raw) as CallMessage | ActivateMessage;
    if (msg.t === 'activate') {
      this.options.host
        .activate(msg.instanceId)
        .catch((err: unknown) =>
          this.options.log.warn({ err, instanceId: msg.instanceId }, 'handoff activation failed'),
        );
      return;
    }
    if (!this.#taken.first(msg.id)) {
      this.options.log.warn(
        { instanceId: msg.instanceId, kind: msg.kind, from: msg.from },
        'dropped a repeated routed call',
      );
      return;
    }
    const serving = this.#serve(msg).finally(() => this.#serving.delete(serving));
    this.#serving.add(serving);
  }

  async #serve(msg: CallMessage): Promise<void> {
    if (this.options.log.isLevelEnabled('debug')) {
      this.options.log.debug(
        { instanceId: msg.instanceId, kind: msg.kind, from: msg.from, requestId: msg.requestId },
        'serving a routed call',
      );
    }
    let reply: ReplyMessage;
    try {
      const actor =
        this.options.host.get(msg.instanceId) ?? (msg.activate ? await this.#activateHere(msg.instanceId) : undefined);
      if (!actor) {
        // A hint naming this node is stale: forgotten, so that the caller's retry looks elsewhere.
        await this.options.directory.forget(msg.instanceId, this.options.nodeId).catch(() => undefined);
        throw new NotOwnerError(msg.instanceId);
      }
      let replayed = false;
      const keyed = msg.idempotent ? { tag: msg.idempotent, onReplayed: () => (replayed = true) } : undefined;
      const result = await actor.call(msg.kind, msg.payload as never, msg.timeoutMs, msg.requestId, keyed);
      reply = { t: 'reply', id: msg.id, ok: true, result, ...(replayed ? { replayed: true as const } : {}) };
    } catch (err) {
      const known = err instanceof AppError;
      if (!known) {
        this.options.log.error(
          { err, instanceId: msg.instanceId, kind: msg.kind, requestId: msg.requestId },
          'routed call failed',
        );
      }
      reply = {
        t: 'reply',
        id: msg.id,
        ok: false,
        code: known ? err.code : ErrorCode.Internal,
        message: known ? err.message : 'Internal server error',
      };
    }
    await this.options.transport.publish(channels.reply(msg.from), this.#encode(reply, msg)).catch((err: unknown) => {
      this.options.log.warn({ err, to: msg.from }, 'could not send a reply');
    });
  }

  /** The reply as JSON; a result that cannot be encoded (a bug) is answered as an internal error, not thrown. */
  #encode(reply: ReplyMessage, msg: CallMessage): string {
    try {
      return JSON.stringify(reply);
    } catch (err) {
      this.options.log.error({ err, instanceId: msg.instanceId, kind: msg.kind }, 'routed call result not encodable');
      const failed: ReplyMessage = {
        t: 'reply',
        id: msg.id,
        ok: false,
        code: ErrorCode.Internal,
        message: 'Internal server error',
      };
      return JSON.stringify(failed);
    }
  }

  /** Tells the node that should own an instance to take it now (after this node released it). */
  async handOff(instanceId: string, target: string): Promise<void> {
    const msg: ActivateMessage = { t: 'activate', instanceId };
    await this.options.transport.publish(channels.inbox(target), JSON.stringify(msg));
  }
}
