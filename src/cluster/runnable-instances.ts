import type { InstanceRepository } from '../store/store.js';

export interface RunnableSet {
  ids: readonly string[];
  has(id: string): boolean;
  /** False while a moved list is held back: an instance missing from it may be runnable (linked since). */
  current: boolean;
}

/**
 * While the version keeps moving (numbers being linked), the list is read again at most once per this
 * many times its last read's duration: every node reading 50,000 rows each second was most of a 2-core
 * machine. Once the version holds still for a pass, the list is read at once.
 */
const READ_SHARE = 10;
/** A read quicker than this (a few thousand instances) is not held back at all. */
const SLOW_READ_MS = 50;
/** Nor is a read held back longer than this, however slow the last one was. */
const MAX_HOLD_MS = 10_000;

/**
 * The instances the cluster must run, read again from the store only when its runnable version moved: a
 * reconcile pass at rest costs one small read, not one row per instance (100,000 rows each second on
 * every node would be the store's largest load).
 */
export class RunnableInstances {
  #version: number | undefined;
  #current: RunnableSet = { ids: [], has: () => false, current: false };
  #nextReadAt = Number.NEGATIVE_INFINITY;
  /** The version the last call saw. */
  #seen: number | undefined;

  constructor(
    private readonly instances: Pick<InstanceRepository, 'runnableVersion' | 'listRunnable'>,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async read(): Promise<RunnableSet> {
    // The version first: a change committed after this read shows as a newer version next time.
    const version = await this.instances.runnableVersion();
    const settled = version === this.#seen;
    this.#seen = version;
    if (version !== this.#version && (settled || this.now() >= this.#nextReadAt)) {
      const started = this.now();
      const ids = await this.instances.listRunnable();
      const set = new Set(ids);
      this.#current = { ids, has: (id) => set.has(id), current: true };
      this.#version = version;
      const took = this.now() - started;
      this.#nextReadAt =
        took < SLOW_READ_MS ? Number.NEGATIVE_INFINITY : this.now() + Math.min(MAX_HOLD_MS, READ_SHARE * took);
    }
    return version === this.#version ? this.#current : { ...this.#current, current: false };
  }
}
