import { StoreUnavailableError } from '../errors.js';

/** Whether a backend's error means the store is out of reach (rather than a bug or a refused write). */
export type OutageTest = (err: unknown) => boolean;

/**
 * The repository with every method's outage errors turned into StoreUnavailableError, so that routes
 * answer 503 `store unavailable` and the actor's retries recognise one error whatever the backend.
 * Methods run on the repository itself (its private fields stay reachable).
 */
export function guardOutages<R extends object>(repository: R, isOutage: OutageTest): R {
  const translate = (err: unknown) => (isOutage(err) ? new StoreUnavailableError({ cause: err }) : err);
  return new Proxy(repository, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        let result: unknown;
        try {
          result = (value as (...a: unknown[]) => unknown).apply(target, args);
        } catch (err) {
          throw translate(err);
        }
        if (!(result instanceof Promise)) return result;
        return result.catch((err: unknown) => {
          throw translate(err);
        });
      };
    },
  });
}
