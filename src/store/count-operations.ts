import type { Store } from './store.js';

type Method = (...args: unknown[]) => unknown;

/** The store's members that are not repositories. */
const NOT_REPOSITORIES = new Set(['kind', 'ping', 'close']);

/** A store whose every repository call is counted, by repository (capacity metrics: store operations per second). */
export interface CountedStore {
  store: Store;
  /** Calls so far, by repository name (`instances`, `ownedState`…). */
  counts(): Readonly<Record<string, number>>;
}

export interface CountOperationsOptions {
  /** A call that held the event loop this long (ms) before returning is reported. @default Infinity */
  blockingMs?: number;
  /** Told of each such call: the SQLite store answers synchronously, and a lock held by another process blocks. */
  onBlocking?: (call: string, ms: number) => void;
}

/** Wraps `store` so that each call of a repository method adds one to that repository's count. */
export function countOperations(store: Store, options: CountOperationsOptions = {}): CountedStore {
  const blockingMs = options.blockingMs ?? Number.POSITIVE_INFINITY;
  const counts: Record<string, number> = {};
  const wrapped = new Map<string, unknown>();
  const repository = (name: string, repo: object): object => {
    counts[name] = 0;
    // Keyed by the method itself: a member replaced on the repository is counted as it is now, not as it was.
    const methods = new WeakMap<Method, Method>();
    return new Proxy(repo, {
      get(target, key) {
        const value: unknown = Reflect.get(target, key, target);
        if (typeof key !== 'string' || typeof value !== 'function') return value;
        let method = methods.get(value as Method);
        if (!method) {
          const fn = (value as Method).bind(target);
          method = (...args: unknown[]) => {
            counts[name]!++;
            const started = performance.now();
            const result = fn(...args);
            const ms = performance.now() - started;
            if (ms >= blockingMs) options.onBlocking?.(`${name}.${key}`, Math.round(ms));
            return result;
          };
          methods.set(value as Method, method);
        }
        return method;
      },
    });
  };
  const counted = new Proxy<Store>(store, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof key !== 'string') return value;
      if (typeof value === 'function') return (value as Method).bind(target);
      if (NOT_REPOSITORIES.has(key) || typeof value !== 'object' || value === null) return value;
      if (!wrapped.has(key)) wrapped.set(key, repository(key, value));
      return wrapped.get(key);
    },
  });
  return { store: counted, counts: () => counts };
}
