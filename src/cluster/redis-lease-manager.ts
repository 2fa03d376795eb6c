import { ExecutionError, Redlock, ResourceLockedError } from '@sesamecare-oss/redlock';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { keys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import { validityFrom } from './lease-manager.js';
import type { Lease, LeaseManager, RenewOutcome } from './lease-manager.js';

/** Renewals go in batches of this many leases per script call, to keep each call short. */
const RENEW_BATCH = 500;

/**
 * Leases over one Redis or several independent masters. Redlock takes a lease (SET NX PX on a majority,
 * with its drift allowance); an owner key beside it tells routers which node holds it; renewals and
 * releases go in batches through our own scripts, counted per lease against the same majority.
 */
export class RedisLeaseManager implements LeaseManager {
  readonly #redlock: Redlock;
  readonly #quorum: number;

  constructor(
    private readonly clients: Redis[],
    private readonly nodeId: string,
    readonly ttlMs: number,
    private readonly logger: Logger,
  ) {
    if (clients.length === 0) throw new Error('RedisLeaseManager needs at least one Redis client');
    // No retries: a held lease is the normal case (another node owns the instance), not contention.
    this.#redlock = new Redlock(clients, { retryCount: 0, driftFactor: 0.01 });
    this.#redlock.on('error', () => undefined);
    this.#quorum = Math.floor(clients.length / 2) + 1;
  }

  async acquire(resource: string): Promise<Lease | undefined> {
    const start = performance.now();
    let token: string;
    try {
      token = (await this.#redlock.acquire([keys.lease(resource)], this.ttlMs)).value;
    } catch (err) {
      if (err instanceof ExecutionError || err instanceof ResourceLockedError) return undefined;
      throw err;
    }
    const lease = { resource, token, validUntil: validityFrom(start, this.ttlMs) };
    const recorded = await this.#onEach((c) =>
      runScript<number>(
        c,
        'recordOwner',
        [keys.lease(resource), keys.owner(resource)],
        [token, this.nodeId, this.ttlMs],
      ),
    );
    if (recorded.filter((r) => r === 1).length < this.#quorum || performance.now() >= lease.validUntil) {
      await this.release([lease]);
      return undefined;
    }
    return lease;
  }

  async renew(leases: Lease[]): Promise<RenewOutcome> {
    const outcome: RenewOutcome = { renewed: [], lost: [] };
    for (let i = 0; i < leases.length; i += RENEW_BATCH) {
      const batch = leases.slice(i, i + RENEW_BATCH);
      const start = performance.now();
      const perClient = await this.#onEach((c) =>
        runScript<number[]>(
          c,
          'renewLeases',
          batch.flatMap((l) => [keys.lease(l.resource), keys.owner(l.resource)]),
          [this.ttlMs, this.nodeId, ...batch.map((l) => l.token)],
        ),
      );
      const validUntil = validityFrom(start, this.ttlMs);
      batch.forEach((lease, j) => {
        const yes = perClient.filter((r) => Array.isArray(r) && r[j] === 1).length;
        // A master that failed is no answer, not a "no": only definite refusals can make a lease lost.
        const no = perClient.filter((r) => Array.isArray(r) && r[j] !== 1).length;
        if (yes >= this.#quorum) outcome.renewed.push({ ...lease, validUntil });
        else if (no > this.clients.length - this.#quorum) outcome.lost.push(lease);
      });
    }
    return outcome;
  }

  async release(leases: Lease[]): Promise<void> {
    if (leases.length === 0) return;
    await this.#onEach((c) =>
      runScript<number>(
        c,
        'releaseLeases',
        leases.flatMap((l) => [keys.lease(l.resource), keys.owner(l.resource)]),
        leases.map((l) => l.token),
      ),
    );
  }

  async owners(resources: string[]): Promise<(string | undefined)[]> {
    if (resources.length === 0) return [];
    for (const client of this.clients) {
      try {
        return (await client.mget(...resources.map((r) => keys.owner(r)))).map((v) => v ?? undefined);
      } catch (err) {
        this.logger.debug({ err }, 'owner lookup failed on one Redis; trying the next');
      }
    }
    return resources.map(() => undefined);
  }

  async expiresIn(resources: string[]): Promise<(number | undefined)[]> {
    if (resources.length === 0) return [];
    for (const client of this.clients) {
      try {
        const pipeline = client.pipeline();
        for (const r of resources) pipeline.pttl(keys.lease(r));
        const answers = (await pipeline.exec()) ?? [];
        // PTTL answers -2 (no key) or -1 (no expiry): nothing to wait for.
        return answers.map(([err, ms]) => (err || typeof ms !== 'number' || ms < 0 ? undefined : ms));
      } catch (err) {
        this.logger.debug({ err }, 'lease expiry lookup failed on one Redis; trying the next');
      }
    }
    return resources.map(() => undefined);
  }

  /** Runs `op` on every master; a failing master counts as a refusal, never as an error. */
  async #onEach<T>(op: (client: Redis) => Promise<T>): Promise<(T | undefined)[]> {
    const results = await Promise.allSettled(this.clients.map(op));
    return results.map((r) => {
      if (r.status === 'fulfilled') return r.value;
      this.logger.debug({ err: r.reason as unknown }, 'lease operation failed on one Redis');
      return undefined;
    });
  }

  async close(): Promise<void> {
    this.#redlock.removeAllListeners();
  }
}
