import { randomUUID } from 'node:crypto';
import type { Logger } from 'pino';
import type { RedisClient } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { systemClock } from '../util/clock.js';
import type { Clock } from '../util/clock.js';
import { incarnationGraceMs, validityFrom } from './lease-manager.js';
import type { HolderState, Lease, LeaseManager, RenewOutcome } from './lease-manager.js';

/** `runLease-2.lua`'s answer: a code, a duration in ms, and the server's run id. */
type ScriptAnswer = [number, number, string];

/**
 * Leases over one Redis or several independent masters, counted against a majority (Redlock's rule,
 * with its drift allowance). Every operation runs `runLease-2.lua`, which also tells a lease that
 * expired from one that a restarted Redis forgot: a missing lease counts as expired only once the
 * Redis incarnation is older than the TTL and a margin (see the script's header). Redlock itself cannot
 * make that check part of its acquire, hence our own script.
 */
export class RedisLeaseManager implements LeaseManager {
  readonly #quorum: number;
  readonly #graceMs: number;

  constructor(
    private readonly clients: RedisClient[],
    /** Starts every token, so that an operator reading Redis sees which node holds a lease. */
    private readonly nodeId: string,
    readonly ttlMs: number,
    private readonly logger: Logger,
    private readonly clock: Clock = systemClock,
  ) {
    if (clients.length === 0) throw new Error('RedisLeaseManager needs at least one Redis client');
    this.#quorum = Math.floor(clients.length / 2) + 1;
    this.#graceMs = incarnationGraceMs(ttlMs);
  }

  async acquire(resource: string, options: { fresh?: boolean } = {}): Promise<Lease | undefined> {
    const token = `${this.nodeId}/${randomUUID()}`;
    const start = this.clock.now();
    const answers = await this.#run(resource, 'acquire', token, options.fresh ? 0 : this.#graceMs);
    const lease = { resource, token, validUntil: validityFrom(start, this.ttlMs) };
    if (this.#count(answers, (c) => c === 1) >= this.#quorum && this.clock.now() < lease.validUntil) return lease;
    // Taken on a minority (or too late): undo it there, so that a retry or another node can win.
    if (answers.some((a) => a?.[0] === 1)) await this.release(lease);
    return undefined;
  }

  async renew(lease: Lease): Promise<RenewOutcome> {
    const start = this.clock.now();
    const answers = await this.#run(lease.resource, 'renew', lease.token, this.#graceMs);
    const validUntil = validityFrom(start, this.ttlMs);
    const yes = this.#count(answers, (c) => c === 1 || c === 2);
    // A master that failed is no answer, not a "no": only definite refusals can make a lease lost.
    const no = this.#count(answers, (c) => c === 0 || c === -1);
    if (yes >= this.#quorum) {
      // Written again after a restart: only sound while the lease was surely still ours.
      const reasserted = answers.some((a) => a?.[0] === 2);
      if (reasserted && this.clock.now() >= lease.validUntil) {
        await this.release(lease);
        return { kind: 'lost' };
      }
      return { kind: 'renewed', validUntil, reasserted };
    }
    if (no > this.clients.length - this.#quorum) return { kind: 'lost' };
    return { kind: 'undecided' };
  }

  async release(lease: Lease): Promise<void> {
    await this.#run(lease.resource, 'release', lease.token, this.#graceMs);
  }

  async holderState(resource: string, token: string): Promise<HolderState> {
    const answers = await this.#run(resource, 'state', token, this.#graceMs);
    const alive = answers.filter((a): a is ScriptAnswer => a?.[0] === 1);
    if (alive.length >= this.#quorum) {
      // The lease lapses once a majority has let it go: the quorum-th longest PTTL.
      const ttls = alive.map((a) => Math.max(0, a[1])).sort((x, y) => y - x);
      return { kind: 'alive', expiresInMs: ttls[this.#quorum - 1]! };
    }
    if (this.#count(answers, (c) => c === 0) >= this.#quorum) return { kind: 'gone' };
    const waits = answers.filter((a) => a?.[0] === -2).map((a) => a![1]);
    return {
      kind: 'unknown',
      retryInMs: waits.length ? Math.max(...waits) : Math.max(50, Math.floor(this.ttlMs / 10)),
    };
  }

  /** Runs the script on every master; a failing master answers undefined, never throws. */
  async #run(resource: string, op: string, token: string, minAgeMs: number): Promise<(ScriptAnswer | undefined)[]> {
    const results = await Promise.allSettled(
      this.clients.map((c) =>
        runScript<ScriptAnswer>(
          c,
          'runLease',
          [keys.lease(resource), keys.incarnation()],
          [op, token, this.ttlMs, minAgeMs],
        ),
      ),
    );
    return results.map((r) => {
      if (r.status === 'fulfilled') return r.value;
      this.logger.debug({ err: r.reason as unknown, resource, op }, 'lease operation failed on one Redis');
      return undefined;
    });
  }

  #count(answers: (ScriptAnswer | undefined)[], test: (code: number) => boolean): number {
    return answers.filter((a) => a !== undefined && test(a[0])).length;
  }

  async close(): Promise<void> {}
}
