import { UnavailableError } from '../errors.js';
import { keys } from '../redis/keys.js';
import { getMany, setMany } from '../redis/multi-slot.js';
import type { RedisClient } from '../redis/redis-client.js';
import { runScript } from '../redis/scripts.js';

/**
 * Where each instance's owner runs, for routing only: a hint written when a node takes an instance and
 * forgotten when it lets it go. Ownership itself is the store's (holder and epoch) under node leases;
 * a stale or lost hint costs a routed call one "not owner" and a retry, never a second owner.
 */
export interface OwnerDirectory {
  lookup(instanceIds: string[]): Promise<(string | undefined)[]>;
  record(instanceIds: string[], nodeId: string): Promise<void>;
  /** Forgets the hint of an instance if it still names `nodeId`. */
  forget(instanceId: string, nodeId: string): Promise<void>;
}

/** Embedded mode: one process, one map. */
export class LocalOwnerDirectory implements OwnerDirectory {
  readonly #owners = new Map<string, string>();

  async lookup(instanceIds: string[]): Promise<(string | undefined)[]> {
    return instanceIds.map((id) => this.#owners.get(id));
  }

  async record(instanceIds: string[], nodeId: string): Promise<void> {
    for (const id of instanceIds) this.#owners.set(id, nodeId);
  }

  async forget(instanceId: string, nodeId: string): Promise<void> {
    if (this.#owners.get(instanceId) === nodeId) this.#owners.delete(instanceId);
  }
}

/** Hints in Redis, one key per instance without expiry: written on moves only, so idle costs nothing. */
export class RedisOwnerDirectory implements OwnerDirectory {
  constructor(private readonly redis: RedisClient) {}

  /** @throws UnavailableError when Redis cannot be reached (a 503: no fault of the caller's). */
  async lookup(instanceIds: string[]): Promise<(string | undefined)[]> {
    if (instanceIds.length === 0) return [];
    try {
      return (
        await getMany(
          this.redis,
          instanceIds.map((id) => keys.owner(id)),
        )
      ).map((v) => v ?? undefined);
    } catch (err) {
      throw new UnavailableError('Cluster coordination unavailable; try again later', { cause: err });
    }
  }

  async record(instanceIds: string[], nodeId: string): Promise<void> {
    await setMany(
      this.redis,
      instanceIds.map((id) => [keys.owner(id), nodeId]),
    );
  }

  async forget(instanceId: string, nodeId: string): Promise<void> {
    await runScript(this.redis, 'forgetOwner', [keys.owner(instanceId)], [nodeId]);
  }
}
