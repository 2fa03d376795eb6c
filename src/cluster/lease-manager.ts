/**
 * Time-bounded ownership of a resource (an instance id, or a singleton role). `validUntil` is on the
 * monotonic clock (`performance.now()`): until then the lease is surely ours, whatever the wall clock
 * does; after it, the holder must assume someone else may own the resource.
 */
export interface Lease {
  resource: string;
  token: string;
  validUntil: number;
}

/**
 * What a renewal round learnt: `renewed` (with a new validUntil) and `lost` (a majority can no longer say
 * they are ours). A lease in neither is undecided (a Redis error or timeout): it stays valid until its
 * current validUntil, and the holder tries again within that time.
 */
export interface RenewOutcome {
  renewed: Lease[];
  lost: Lease[];
}

export interface LeaseManager {
  readonly ttlMs: number;
  /** Takes the lease if nobody holds it; undefined when it is held (or the quorum was not reached). */
  acquire(resource: string): Promise<Lease | undefined>;
  /** Extends leases still held. Never throws: an unreachable Redis leaves leases undecided. */
  renew(leases: Lease[]): Promise<RenewOutcome>;
  /** Gives leases up (best effort: an unreleased lease simply expires). */
  release(leases: Lease[]): Promise<void>;
  /** The node id holding each resource's lease, as far as Redis knows. */
  owners(resources: string[]): Promise<(string | undefined)[]>;
  /** Milliseconds until each resource's lease lapses, as far as Redis knows; undefined when free or unknown. */
  expiresIn(resources: string[]): Promise<(number | undefined)[]>;
  close(): Promise<void>;
}

/** Validity of a lease acquired or renewed at `start`: TTL less the clock drift allowance (redlock's). */
export function validityFrom(start: number, ttlMs: number): number {
  return start + ttlMs - (Math.floor(ttlMs * 0.01) + 2);
}

/** Leases for one process (embedded mode): the same contract, kept in a map. */
export class LocalLeaseManager implements LeaseManager {
  readonly #held = new Map<string, { token: string; owner: string; expiresAt: number }>();
  #seq = 0;

  constructor(
    private readonly nodeId: string,
    readonly ttlMs: number,
  ) {}

  #live(resource: string) {
    const held = this.#held.get(resource);
    if (held && held.expiresAt > performance.now()) return held;
    this.#held.delete(resource);
    return undefined;
  }

  async acquire(resource: string): Promise<Lease | undefined> {
    if (this.#live(resource)) return undefined;
    const start = performance.now();
    const token = `${this.nodeId}:${++this.#seq}`;
    this.#held.set(resource, { token, owner: this.nodeId, expiresAt: start + this.ttlMs });
    return { resource, token, validUntil: validityFrom(start, this.ttlMs) };
  }

  async renew(leases: Lease[]): Promise<RenewOutcome> {
    const start = performance.now();
    const outcome: RenewOutcome = { renewed: [], lost: [] };
    for (const l of leases) {
      const held = this.#live(l.resource);
      if (held?.token !== l.token) {
        outcome.lost.push(l);
        continue;
      }
      held.expiresAt = start + this.ttlMs;
      outcome.renewed.push({ ...l, validUntil: validityFrom(start, this.ttlMs) });
    }
    return outcome;
  }

  async release(leases: Lease[]): Promise<void> {
    for (const l of leases) if (this.#held.get(l.resource)?.token === l.token) this.#held.delete(l.resource);
  }

  async owners(resources: string[]): Promise<(string | undefined)[]> {
    return resources.map((r) => this.#live(r)?.owner);
  }

  async expiresIn(resources: string[]): Promise<(number | undefined)[]> {
    const now = performance.now();
    return resources.map((r) => {
      const held = this.#live(r);
      return held ? held.expiresAt - now : undefined;
    });
  }

  async close(): Promise<void> {
    this.#held.clear();
  }
}
