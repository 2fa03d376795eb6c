import type { AuthStore } from '../../../src/msgnet/msgnet-driver.js';
import { settle } from '../manual-clock.js';

/** An in-memory `AuthStore` that records every write; `setError` makes writes fail (a stale epoch, say). */
export class MemoryAuthStore implements AuthStore {
  readonly data = new Map<string, string>();
  /** Every `set` call, in order, as it was given. */
  readonly sets: Record<string, string | null>[] = [];
  clears = 0;
  setError: Error | undefined;
  /** A write lands only a few turns of the event loop later (a slow store), to expose ordering bugs. */
  slow = false;

  async get(key: string): Promise<string | undefined> {
    return this.data.get(key);
  }

  async getMany(keys: string[]): Promise<Map<string, string>> {
    const out = new Map<string, string>();
    for (const key of keys) {
      const value = this.data.get(key);
      if (value !== undefined) out.set(key, value);
    }
    return out;
  }

  async list(prefix: string): Promise<Map<string, string>> {
    const keys = [...this.data.keys()].filter((key) => key.startsWith(prefix)).sort();
    return new Map(keys.map((key) => [key, this.data.get(key)!]));
  }

  async set(entries: Record<string, string | null>): Promise<void> {
    if (this.setError) throw this.setError;
    this.sets.push({ ...entries });
    if (this.slow) for (let i = 0; i < 3; i++) await settle();
    for (const [key, value] of Object.entries(entries)) {
      if (value === null) this.data.delete(key);
      else this.data.set(key, value);
    }
  }

  async clear(): Promise<void> {
    this.clears++;
    this.data.clear();
  }
}
