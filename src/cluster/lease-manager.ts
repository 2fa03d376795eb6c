import { randomUUID } from 'node:crypto';
import { systemClock } from '../util/clock.js';
import type { Clock } from '../util/clock.js';

/**
 * Time-bounded hold on a named resource: a node's `node:<nodeId>` (under which it owns its instances) or
 * a singleton role's `singleton:<name>`. `validUntil` is on the holder's monotonic clock: until then the
 * lease is surely its own, whatever the wall clock does; after it, the holder must assume it is not.
 */
export interface Lease {
  resource: string;
  token: string;
  validUntil: number;
}

/**
 * What one renewal learnt: `renewed` (with the new validity; `reasserted` when a restarted Redis had
 * forgotten the lease and it was written again within its validity), `lost` (a majority says it lapsed
 * or another holds it), or `undecided` (no majority either way: Redis unreachable). An undecided lease
 * stays valid until its current `validUntil`, and the holder tries again within that time.
 */
export type RenewOutcome =
  { kind: 'renewed'; validUntil: number; reasserted: boolean } | { kind: 'lost' } | { kind: 'undecided' };

/**
 * What the coordination store knows of someone else's lease, named by its token: `alive` (for about
 * `expiresInMs` more unless renewed), `gone` (surely lapsed or released: its holder has stopped), or
 * `unknown` (Redis unreachable, or an incarnation too young to tell: ask again after `retryInMs`).
 */
export type HolderState =
  { kind: 'alive'; expiresInMs: number } | { kind: 'gone' } | { kind: 'unknown'; retryInMs: number };

export interface LeaseManager {
  readonly ttlMs: number;
  /**
   * Takes the lease if nobody holds it; undefined when it is held, or when a restarted Redis is too young
   * to tell that its last holder has stopped (`fresh`: the resource is new, e.g. a node's own, so no
   * earlier holder can exist and the wait is skipped).
   */
  acquire(resource: string, options?: { fresh?: boolean }): Promise<Lease | undefined>;
  /** Extends a lease still held. Never throws: an unreachable Redis is `undecided`. */
  renew(lease: Lease): Promise<RenewOutcome>;
  /** Gives the lease up (best effort: an unreleased lease simply expires). */
  release(lease: Lease): Promise<void>;
  /** Whether the holder of `token` on `resource` may still act. Never throws: unreachable is `unknown`. */
  holderState(resource: string, token: string): Promise<HolderState>;
  close(): Promise<void>;
}

/** The drift allowance of a lease: 1% of the TTL and 2 ms (Redlock's). */
export function driftAllowance(ttlMs: number): number {
  return Math.floor(ttlMs * 0.01) + 2;
}

/** Validity of a lease acquired or renewed at `start`: TTL less the clock drift allowance. */
export function validityFrom(start: number, ttlMs: number): number {
  return start + ttlMs - driftAllowance(ttlMs);
}

/**
 * How old a Redis incarnation must be before a lease missing from it counts as expired: the TTL (every
 * holder of the earlier incarnation has stopped by then) plus a second for clock rates and for skew
 * between the hosts of a primary and the replica promoted in its place.
 */
export function incarnationGraceMs(ttlMs: number): number {
  return ttlMs + 1000;
}

export const nodeResource = (nodeId: string): string => `node:${nodeId}`;

/** Leases for one process (embedded mode): the same contract, kept in a map. */
export class LocalLeaseManager implements LeaseManager {
  readonly #held = new Map<string, { token: string; expiresAt: number }>();

  constructor(
    readonly ttlMs: number,
    private readonly clock: Clock = systemClock,
  ) {}

  #live(resource: string) {
    const held = this.#held.get(resource);
    if (held && held.expiresAt > this.clock.now()) return held;
    this.#held.delete(resource);
    return undefined;
  }

  async acquire(resource: string): Promise<Lease | undefined> {
    if (this.#live(resource)) return undefined;
    const start = this.clock.now();
    const token = randomUUID();
    this.#held.set(resource, { token, expiresAt: start + this.ttlMs });
    return { resource, token, validUntil: validityFrom(start, this.ttlMs) };
  }

  async renew(lease: Lease): Promise<RenewOutcome> {
    const start = this.clock.now();
    const held = this.#live(lease.resource);
    if (held?.token !== lease.token) return { kind: 'lost' };
    held.expiresAt = start + this.ttlMs;
    return { kind: 'renewed', validUntil: validityFrom(start, this.ttlMs), reasserted: false };
  }

  async release(lease: Lease): Promise<void> {
    if (this.#held.get(lease.resource)?.token === lease.token) this.#held.delete(lease.resource);
  }

  async holderState(resource: string, token: string): Promise<HolderState> {
    const held = this.#live(resource);
    return held?.token === token ? { kind: 'alive', expiresInMs: held.expiresAt - this.clock.now() } : { kind: 'gone' };
  }

  async close(): Promise<void> {
    this.#held.clear();
  }
}
