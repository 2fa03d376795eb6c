import type { Logger } from 'pino';
import { FencedError, NotOwnerError, TimeoutError, UnavailableError } from '../errors.js';
import type { ConnectionInfo, InstanceConfig, OwnedStateOp } from '../store/records.js';
import type { ConfigBlock, Store } from '../store/store.js';
import type { ActorCallKind, ActorPayload, ActorResult, ActorState } from './actor-calls.js';

/** What a behaviour may do while it runs a turn. Every side effect goes through the owner checks here. */
export interface ActorContext {
  readonly instanceId: string;
  readonly nodeId: string;
  readonly epoch: number;
  readonly store: Store;
  /** The actor's logger; while a call runs for a request, its lines also carry that request's id. */
  readonly log: Logger;
  /** @throws NotOwnerError unless the lease is surely still ours (checked on the monotonic clock). */
  assertOwner(): void;
  /** An owned write under this actor's epoch; a refusal stops the actor at once. */
  writeOwned(ops: OwnedStateOp[]): Promise<void>;
  /** Deletes a namespace of owned state under this actor's epoch (same fencing as writeOwned). */
  clearOwned(namespace: string): Promise<void>;
  setConnection(connection: ConnectionInfo): Promise<void>;
  /** A configuration block the owner keeps (helpdesk status), written under this actor's epoch. */
  writeConfigBlock<K extends ConfigBlock>(block: K, value: InstanceConfig[K] | undefined): Promise<void>;
}

export type CallHandler<K extends ActorCallKind> = (
  ctx: ActorContext,
  payload: ActorPayload<K>,
) => Promise<ActorResult<K>>;

/** Who answers each call kind; a kind nobody answers is refused as unsupported. */
export type CallHandlers = { [K in ActorCallKind]?: CallHandler<K> };

/**
 * The one way handler tables are combined: a kind answered by two tables is a wiring mistake, so it throws
 * when the actor is built instead of letting one answer silently replace the other.
 */
export function mergeHandlers(...tables: CallHandlers[]): CallHandlers {
  const merged: Record<string, unknown> = {};
  for (const table of tables) {
    for (const [kind, handler] of Object.entries(table)) {
      if (kind in merged) throw new Error(`two handlers for the actor call '${kind}'`);
      merged[kind] = handler;
    }
  }
  return merged;
}

/** How an instance behaves on its owner node: start, stop, and the calls it answers. */
export interface ActorBehavior {
  onActivate?(ctx: ActorContext): Promise<void>;
  /** Must end every side effect (sockets, timers) before it resolves. */
  onStop?(ctx: ActorContext, reason: StopReason): Promise<void>;
  handlers: CallHandlers;
}

/**
 * Why an actor left its node: `handoff` (placement moved it), `shutdown` (the node leaves), `lease-lost`
 * and `fenced` (another node owns it now), `deleted` (the instance is gone), `disabled` (its account was
 * disabled; the session is kept for when it is enabled), `idle` (nothing to run), `activation-failed`.
 */
export type StopReason =
  'handoff' | 'shutdown' | 'lease-lost' | 'fenced' | 'deleted' | 'disabled' | 'idle' | 'activation-failed';

export interface InstanceActorOptions {
  instanceId: string;
  nodeId: string;
  epoch: number;
  store: Store;
  behavior: ActorBehavior;
  log: Logger;
  /** Monotonic time until which the lease is surely ours. */
  leaseValidUntil: () => number;
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
  timer: NodeJS.Timeout;
  settled: boolean;
  /** The request the call serves, if any (its log lines carry it). */
  requestId?: string;
  /** `log` with the request id bound, made at the first line logged for it. */
  log?: Logger;
}

/**
 * One instance on its owner node: a mailbox that runs one call at a time (turn-based), each with a
 * deadline, bounded in length. Before every turn and every owned write it checks that its lease is still
 * valid; a stale epoch refused by the store stops it at once.
 */
export class InstanceActor {
  #state: ActorState = 'activating';
  #queue: Job[] = [];
  #running = false;
  #idleWaiters: (() => void)[] = [];
  #stopping: Promise<void> | undefined;
  /** The call running now: one at a time, so the lines logged meanwhile are its. */
  #current: Job | undefined;
  lastActivity = performance.now();
  readonly ctx: ActorContext;

  constructor(private readonly options: InstanceActorOptions) {
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
    return performance.now() < this.options.leaseValidUntil() - this.options.safetyMarginMs;
  }

  /** Runs the behaviour's start, then opens the mailbox (also when a drain began meanwhile). */
  async activate(): Promise<void> {
    await this.options.behavior.onActivate?.(this.ctx);
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
  ): Promise<ActorResult<K>> {
    if (this.#state === 'stopped') return Promise.reject(new NotOwnerError(this.options.instanceId));
    if (this.#queue.length >= this.options.maxQueue) {
      return Promise.reject(new UnavailableError('Instance is busy; try again later'));
    }
    return new Promise<ActorResult<K>>((resolve, reject) => {
      const job: Job = {
        kind,
        payload,
        ...(requestId === undefined ? {} : { requestId }),
        resolve: resolve as (v: unknown) => void,
        reject,
        settled: false,
        timer: setTimeout(() => {
          if (job.settled) return;
          job.settled = true;
          // A queued call leaves the mailbox; a running one finishes, but nobody waits for it any more.
          this.#queue = this.#queue.filter((j) => j !== job);
          reject(new TimeoutError());
        }, timeoutMs),
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
    this.lastActivity = performance.now();
    this.#current = job;
    void this.#run(job).finally(() => {
      this.#current = undefined;
      this.#running = false;
      this.#pump();
    });
  }

  async #run(job: Job): Promise<void> {
    try {
      this.#assertOwner();
      const handler = this.options.behavior.handlers[job.kind] as CallHandler<ActorCallKind> | undefined;
      if (!handler) throw new UnavailableError(`Operation ${job.kind} is not available`);
      const result = await handler(this.ctx, job.payload as never);
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
      const timer = setTimeout(resolve, timeoutMs);
      this.#idleWaiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }

  /** Refuses everything queued and ends the behaviour's side effects. */
  stop(reason: StopReason): Promise<void> {
    this.#stopping ??= (async () => {
      this.#state = 'stopped';
      for (const job of this.#queue.splice(0)) {
        settle(job, () => job.reject(new NotOwnerError(this.options.instanceId)));
      }
      for (const w of this.#idleWaiters.splice(0)) w();
      try {
        await this.options.behavior.onStop?.(this.ctx, reason);
      } catch (err) {
        this.options.log.error({ err }, 'actor stop hook failed');
      }
    })();
    return this.#stopping;
  }
}

function settle(job: Job, fn: () => void): void {
  if (job.settled) return;
  job.settled = true;
  clearTimeout(job.timer);
  fn();
}
