import type { Logger } from 'pino';
import {
  FencedError,
  NotOwnerError,
  OutcomeUnknownError,
  TimeoutError,
  UnavailableError,
  isOwnershipLoss,
} from '../errors.js';
import type { Store } from '../store/store.js';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';
import type { ActorCallKind, ActorPayload, ActorResult, ActorState, IdempotencyTag } from './actor-calls.js';
import type { ActorContext } from './actor-context.js';
import { runIdempotent } from './idempotency-records.js';

export type { ActorContext } from './actor-context.js';

/** Answers one call kind; `scope` is the calling actor's own (its context, and what its behaviour adds). */
export type CallHandler<K extends ActorCallKind, S = ActorContext> = (
  scope: S,
  payload: ActorPayload<K>,
) => Promise<ActorResult<K>>;

/** Who answers each call kind; a kind nobody answers is refused as unsupported. */
export type CallHandlers<S = ActorContext> = { [K in ActorCallKind]?: CallHandler<K, S> };

/**
 * The one way handler tables are combined: a kind answered by two tables is a wiring mistake, so it throws
 * when the actor is built instead of letting one answer silently replace the other.
 */
export function mergeHandlers<S>(...tables: CallHandlers<S>[]): CallHandlers<S> {
  const merged: Record<string, unknown> = {};
  for (const table of tables) {
    for (const [kind, handler] of Object.entries(table)) {
      if (kind in merged) throw new Error(`two handlers for the actor call '${kind}'`);
      merged[kind] = handler;
    }
  }
  return merged;
}

interface BehaviorHooks<S> {
  onActivate?(scope: S): Promise<void>;
  /** Must end every side effect (sockets, timers) before it resolves. */
  onStop?(scope: S, reason: StopReason): Promise<void>;
  /** One table for all the node's actors: each handler gets its actor's scope as an argument. */
  handlers: CallHandlers<S>;
}

/**
 * How an instance behaves on its owner node: start, stop, and the calls it answers. `scope` makes, once
 * per actor, what its hooks and handlers receive (the messaging behaviour adds the session, the instance
 * and its events to the context); without it they receive the actor's context, so a behaviour whose
 * scope is more than the context must give it.
 */
export type ActorBehavior<S = ActorContext> = BehaviorHooks<S> &
  ([ActorContext] extends [S] ? { scope?(ctx: ActorContext): S } : { scope(ctx: ActorContext): S });

/**
 * Why an actor left its node: `handoff` (placement moved it), `shutdown` (the node leaves), `lease-lost`
 * and `fenced` (another node owns it now), `deleted` (the instance is gone), `disabled` (its account was
 * disabled; the session is kept for when it is enabled), `idle` (nothing to run), `activation-failed`.
 */
export type StopReason =
  'handoff' | 'shutdown' | 'lease-lost' | 'fenced' | 'deleted' | 'disabled' | 'idle' | 'activation-failed';

/** Stops this node chose while it still owns the instance: what is under way may finish first. */
export function isGracefulStop(reason: StopReason): boolean {
  return reason === 'handoff' || reason === 'shutdown' || reason === 'disabled' || reason === 'idle';
}

export interface InstanceActorOptions<S = ActorContext> {
  instanceId: string;
  nodeId: string;
  epoch: number;
  store: Store;
  behavior: ActorBehavior<S>;
  log: Logger;
  /** The clock's time until which the lease is surely ours. */
  leaseValidUntil: () => number;
  /** Deadlines, drains and the lease's validity are read on it. @default systemClock */
  clock?: Clock;
  /** Stop side effects this long before the lease may expire. @default 250 */
  safetyMarginMs: number;
  /** Calls waiting beyond this many are refused with 503. @default 1000 */
  maxQueue: number;
  /** Called once when the actor stops on its own (lease lost, fenced). */
  onSelfStop: (reason: StopReason) => void;
}

interface Job {
  kind: ActorCallKind;
  payload: unknown;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
  /** Cancels the call's deadline. */
  timer: Cancel;
  settled: boolean;
  /** The request the call serves, if any (its log lines carry it). */
  requestId?: string;
  /** `log` with the request id bound, made at the first line logged for it. */
  log?: Logger;
  /** A call for a request with an Idempotency-Key: run at most once (actors/idempotency-records.ts). */
  idempotent?: KeyedCall;
}

/** How a keyed call is asked for: its tag, and who learns that its answer was recorded earlier. */
export interface KeyedCall {
  tag: IdempotencyTag;
  onReplayed?: () => void;
}

/**
 * One instance on its owner node: a mailbox that runs one call at a time (turn-based), each with a
 * deadline, bounded in length. Before every turn and every owned write it checks that its lease is still
 * valid; a stale epoch refused by the store stops it at once.
 */
export class InstanceActor<S = ActorContext> {
  #state: ActorState = 'activating';
  #queue: Job[] = [];
  #running = false;
  #idleWaiters: (() => void)[] = [];
  #stopping: Promise<void> | undefined;
  /** The call running now: one at a time, so the lines logged meanwhile are its. */
  #current: Job | undefined;
  readonly #clock: Clock;
  /** The clock's time of the last turn started (the reconciler stops idle actors). */
  lastActivity: number;
  readonly ctx: ActorContext;
  /** What the behaviour's hooks and handlers receive, made once. */
  readonly #scope: S;

  constructor(private readonly options: InstanceActorOptions<S>) {
    this.#clock = options.clock ?? systemClock;
    this.lastActivity = this.#clock.now();
    const current = () => this.#current;
    this.ctx = {
      instanceId: options.instanceId,
      nodeId: options.nodeId,
      epoch: options.epoch,
      store: options.store,
      get log() {
        const job = current();
        if (job?.requestId === undefined) return options.log;
        return (job.log ??= options.log.child({ requestId: job.requestId }));
      },
      assertOwner: () => this.#assertOwner(),
      writeOwned: async (ops) => {
        this.#assertOwner();
        await this.#fenced(options.store.ownedState.write(options.instanceId, options.epoch, ops));
      },
      clearOwned: async (namespace) => {
        this.#assertOwner();
        await this.#fenced(options.store.ownedState.clear(options.instanceId, options.epoch, namespace));
      },
      setConnection: async (connection) => {
        this.#assertOwner();
        await this.#fenced(options.store.instances.setConnection(options.instanceId, options.epoch, connection));
      },
      writeConfigBlock: async (block, value) => {
        this.#assertOwner();
        const written = options.store.instances.updateConfigBlock(options.instanceId, block, value, options.epoch);
        if (!(await this.#fenced(written))) throw new NotOwnerError(options.instanceId);
      },
    };
    // ActorBehavior's type requires `scope` unless the context itself is an S.
    const makeScope = (options.behavior as { scope?: (ctx: ActorContext) => S }).scope;
    this.#scope = makeScope ? makeScope.call(options.behavior, this.ctx) : (this.ctx as S);
  }

  get state(): ActorState {
    return this.#state;
  }

  get epoch(): number {
    return this.options.epoch;
  }

  get queueLength(): number {
    return this.#queue.length + (this.#running ? 1 : 0);
  }

  /** True while the lease is surely ours, with the safety margin. */
  leaseValid(): boolean {
    return this.#clock.now() < this.options.leaseValidUntil() - this.options.safetyMarginMs;
  }

  /** Runs the behaviour's start, then opens the mailbox (also when a drain began meanwhile). */
  async activate(): Promise<void> {
    await this.options.behavior.onActivate?.(this.#scope);
    if (this.#state === 'stopped') return;
    if (this.#state === 'activating') this.#state = 'active';
    this.#pump();
  }

  /** Queues the call; `requestId` is the request it serves, for the lines logged while it runs. */
  call<K extends ActorCallKind>(
    kind: K,
    payload: ActorPayload<K>,
    timeoutMs: number,
    requestId?: string,
    idempotent?: KeyedCall,
  ): Promise<ActorResult<K>> {
    if (this.#state === 'stopped' || this.#state === 'stopping') {
      return Promise.reject(new NotOwnerError(this.options.instanceId));
    }
    if (this.#queue.length >= this.options.maxQueue) {
      return Promise.reject(new UnavailableError('Instance is busy; try again later'));
    }
    return new Promise<ActorResult<K>>((resolve, reject) => {
      const job: Job = {
        kind,
        payload,
        ...(requestId === undefined ? {} : { requestId }),
        ...(idempotent === undefined ? {} : { idempotent }),
        resolve: resolve as (v: unknown) => void,
        reject,
        settled: false,
        timer: this.#clock.after(timeoutMs, () => {
          if (job.settled) return;
          job.settled = true;
          // A queued call leaves the mailbox; a running one finishes, but nobody waits for it any more.
          this.#queue = this.#queue.filter((j) => j !== job);
          reject(new TimeoutError());
        }),
      };
      this.#queue.push(job);
      this.#pump();
    });
  }

  #pump(): void {
    if (this.#running || (this.#state !== 'active' && this.#state !== 'draining')) return;
    const job = this.#queue.shift();
    if (!job) {
      for (const w of this.#idleWaiters.splice(0)) w();
      return;
    }
    this.#running = true;
    this.lastActivity = this.#clock.now();
    this.#current = job;
    void this.#run(job).finally(() => {
      this.#current = undefined;
      this.#running = false;
      this.#pump();
    });
  }

  async #run(job: Job): Promise<void> {
    try {
      // Refused here, the call did not run: the caller may try the new owner.
      this.#assertOwner();
      const handler = this.options.behavior.handlers[job.kind] as CallHandler<ActorCallKind, S> | undefined;
      if (!handler) throw new UnavailableError(`Operation ${job.kind} is not available`);
      const run = async () => {
        try {
          return await handler(this.#scope, job.payload as never);
        } catch (err) {
          // Lost while it ran: it may have acted, so nobody may run it again on the caller's behalf.
          if (isOwnershipLoss(err)) throw new OutcomeUnknownError();
          throw err;
        }
      };
      const keyed = job.idempotent;
      let result: unknown;
      if (keyed) {
        const outcome = await runIdempotent(this.ctx, keyed.tag, run);
        if (outcome.replayed) keyed.onReplayed?.();
        result = outcome.result;
      } else {
        result = await run();
      }
      settle(job, () => job.resolve(result));
    } catch (err) {
      settle(job, () => job.reject(err));
    }
  }

  #assertOwner(): void {
    if (this.#state === 'stopped') throw new NotOwnerError(this.options.instanceId);
    if (!this.leaseValid()) {
      this.selfStop('lease-lost');
      throw new NotOwnerError(this.options.instanceId);
    }
  }

  async #fenced<T>(write: Promise<T>): Promise<T> {
    try {
      return await write;
    } catch (err) {
      if (err instanceof FencedError) {
        this.selfStop('fenced');
        throw new NotOwnerError(this.options.instanceId);
      }
      throw err;
    }
  }

  /** Stops because ownership is gone (not asked by the host): no draining, side effects end now. */
  selfStop(reason: StopReason): void {
    if (this.#state === 'stopped') return;
    // Ownership is gone, whatever a graceful stop under way was finishing.
    const wasStopping = this.#state === 'stopping';
    this.#state = 'stopped';
    if (wasStopping) return;
    this.options.log.warn(
      { instanceId: this.options.instanceId, epoch: this.options.epoch, reason },
      'actor stopped itself',
    );
    void this.stop(reason);
    this.options.onSelfStop(reason);
  }

  /**
   * Waits until the mailbox is empty, up to `timeoutMs`. Calls keep being accepted meanwhile: a caller
   * refused now would have to retry while the lease is still ours, and fail.
   */
  async drain(timeoutMs: number): Promise<void> {
    if (this.#state === 'stopped') return;
    this.#state = 'draining';
    if (!this.#running && this.#queue.length === 0) return;
    await new Promise<void>((resolve) => {
      const cancel = this.#clock.after(timeoutMs, resolve);
      this.#idleWaiters.push(() => {
        cancel();
        resolve();
      });
    });
  }

  /**
   * Refuses everything queued and ends the behaviour's side effects. A graceful stop lets the behaviour
   * finish what the network already handed over first (`stopping`, while the lease holds); a loss of
   * ownership stops at once.
   */
  stop(reason: StopReason): Promise<void> {
    this.#stopping ??= (async () => {
      this.#state = isGracefulStop(reason) ? 'stopping' : 'stopped';
      for (const job of this.#queue.splice(0)) {
        settle(job, () => job.reject(new NotOwnerError(this.options.instanceId)));
      }
      for (const w of this.#idleWaiters.splice(0)) w();
      try {
        await this.options.behavior.onStop?.(this.#scope, reason);
      } catch (err) {
        this.options.log.error({ err }, 'actor stop hook failed');
      }
      this.#state = 'stopped';
    })();
    return this.#stopping;
  }
}

function settle(job: Job, fn: () => void): void {
  if (job.settled) return;
  job.settled = true;
  job.timer();
  fn();
}
