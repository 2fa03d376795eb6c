import type { PossiblyExtendedCacheStore } from '@whiskeysockets/baileys';

export interface TtlCacheOptions {
  /** How long an entry lives after it was set. */
  ttlMs: number;
  /** Oldest entries are evicted beyond this many. */
  maxEntries: number;
  /** @default Date.now */
  now?: () => number;
}

interface Entry {
  value: unknown;
  expiresAt: number;
}

/**
 * A Map-backed cache for Baileys' `CacheStore` slots. It keeps no timer (each NodeCache runs one, which
 * adds up over hundreds of sockets); expired entries are dropped when read or pushed out by size.
 */
export class TtlCache implements PossiblyExtendedCacheStore {
  readonly #entries = new Map<string, Entry>();
  readonly #now: () => number;

  constructor(private readonly options: TtlCacheOptions) {
    this.#now = options.now ?? Date.now;
  }

  get size(): number {
    return this.#entries.size;
  }

  get<T>(key: string): T | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= this.#now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry.value as T;
  }

  set<T>(key: string, value: T): void {
    // Re-inserting moves the key to the end, so Map order stays oldest-first for eviction.
    this.#entries.delete(key);
    this.#entries.set(key, { value, expiresAt: this.#now() + this.options.ttlMs });
    while (this.#entries.size > this.options.maxEntries) {
      const oldest = this.#entries.keys().next();
      if (oldest.done) break;
      this.#entries.delete(oldest.value);
    }
  }

  del(key: string): void {
    this.#entries.delete(key);
  }

  flushAll(): void {
    this.#entries.clear();
  }

  mget = async <T>(keys: string[]): Promise<Record<string, T | undefined>> => {
    const out: Record<string, T | undefined> = {};
    for (const key of keys) out[key] = this.get<T>(key);
    return out;
  };

  mset = <T>(entries: { key: string; value: T }[]): void => {
    for (const { key, value } of entries) this.set(key, value);
  };

  mdel = (keys: string[]): void => {
    for (const key of keys) this.#entries.delete(key);
  };
}
