import type { InstanceRecord } from '../store/records.js';
import type { InstanceNews } from '../events/instance-news.js';
import type { InstanceRepository } from '../store/store.js';
import { BoundedMap } from '../util/bounded-map.js';

/** How long a record is served without the store: the bound on a change whose news was lost. */
export const INSTANCE_RECORD_TTL_MS = 1000;
const ENTRIES = 10_000;

/**
 * The edge's copy of instance records, so that a request does not read its instance from the store each
 * time. A record goes at once when this node changes it (reportInstanceChanges) or when another node says
 * it did (InstanceNews), and after INSTANCE_RECORD_TTL_MS in any case. Only records are kept, never an
 * absence: an instance created anywhere is found at once. The owner epoch of a cached record may be behind
 * (claims are not announced): fencing never reads it from here, the store checks it.
 */
export class InstanceRecordCache {
  readonly #byId = new BoundedMap<string, { record: InstanceRecord; at: number }>(ENTRIES);
  /** `accountId\nname` → id; names do not change, so only the record behind it is checked. */
  readonly #idByName = new BoundedMap<string, string>(ENTRIES);
  /** Bumped by every `forget`: a read that began before one is not kept (it may hold the old record). */
  #generation = 0;
  #news: InstanceNews | undefined;

  constructor(
    private readonly instances: Pick<InstanceRepository, 'findById' | 'findByName'>,
    private readonly ttlMs = INSTANCE_RECORD_TTL_MS,
    private readonly now: () => number = Date.now,
  ) {}

  /** Records held now, lapsed ones not yet swept included. */
  get size(): number {
    return this.#byId.size;
  }

  findById(id: string): Promise<InstanceRecord | undefined> {
    const cached = this.#fresh(id);
    if (cached) return Promise.resolve(cached);
    return this.#keep(this.instances.findById(id));
  }

  findByName(accountId: string, name: string): Promise<InstanceRecord | undefined> {
    const key = `${accountId}\n${name}`;
    const id = this.#idByName.get(key);
    const cached = id === undefined ? undefined : this.#fresh(id);
    if (cached?.accountId === accountId && cached.name === name) return Promise.resolve(cached);
    return this.#keep(this.instances.findByName(accountId, name));
  }

  /** Follows the other nodes' changes, and tells them this node's (`changedHere`); returns the unsubscribe. */
  follow(news: InstanceNews): Promise<() => Promise<void>> {
    this.#news = news;
    return news.subscribe(({ instanceId }) => this.forget(instanceId));
  }

  /** This node changed the instance's record (reportInstanceChanges): forgotten here at once, then told. */
  changedHere(instanceId: string): void {
    this.forget(instanceId);
    void this.#news?.publish({ instanceId });
  }

  /** Drops the instance's record: it changed, or is gone. */
  forget(instanceId: string): void {
    this.#generation++;
    this.#byId.delete(instanceId);
  }

  #fresh(id: string): InstanceRecord | undefined {
    const entry = this.#byId.get(id);
    if (entry === undefined) return undefined;
    if (this.now() - entry.at < this.ttlMs) return entry.record;
    this.#byId.delete(id);
    return undefined;
  }

  async #keep(read: Promise<InstanceRecord | undefined>): Promise<InstanceRecord | undefined> {
    const generation = this.#generation;
    const record = await read;
    if (record !== undefined && generation === this.#generation) {
      const at = this.now();
      // Re-inserted, so that the map's order is the entries' age and the sweep stops at the first fresh one.
      this.#byId.delete(record.id);
      this.#byId.set(record.id, { record, at });
      this.#idByName.set(`${record.accountId}\n${record.name}`, record.id);
      this.#sweep(at);
    }
    return record;
  }

  /** Drops the lapsed entries, so that the records of instances no longer asked for are not kept. */
  #sweep(now: number): void {
    for (const [id, entry] of this.#byId) {
      if (now - entry.at < this.ttlMs) return;
      this.#byId.delete(id);
      this.#idByName.delete(`${entry.record.accountId}\n${entry.record.name}`);
    }
  }
}
