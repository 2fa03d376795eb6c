import type { InstanceRepository } from '../store/store.js';

export interface RunnableSet {
  ids: readonly string[];
  has(id: string): boolean;
}

/**
 * The instances the cluster must run, read again from the store only when its runnable version moved: a
 * reconcile pass at rest costs one small read, not one row per instance (100,000 rows each second on
 * every node would be the store's largest load).
 */
export class RunnableInstances {
  #version: number | undefined;
  #current: RunnableSet = { ids: [], has: () => false };

  constructor(private readonly instances: Pick<InstanceRepository, 'runnableVersion' | 'listRunnable'>) {}

  async read(): Promise<RunnableSet> {
    // The version first: a change committed after this read shows as a newer version next time.
    const version = await this.instances.runnableVersion();
    if (version !== this.#version) {
      const ids = await this.instances.listRunnable();
      const set = new Set(ids);
      this.#current = { ids, has: (id) => set.has(id) };
      this.#version = version;
    }
    return this.#current;
  }
}
