import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { StoreUnavailableError } from '../errors.js';
import { DEPENDENCY_WAIT, backoffDelay } from '../util/backoff.js';

export interface StoreWaiter {
  /** Throws once this node no longer owns the instance: the wait ends there. */
  assertOwner(): void;
  log: Logger;
  /** The wait ends (rethrowing the store's error) once this says so: the work was abandoned. */
  abandoned?: () => boolean;
}

/**
 * Runs an owned write, waiting while the store is unavailable for as long as this node owns the instance:
 * the work behind it waits, in order, instead of being dropped. Other errors pass through.
 */
export async function untilStored<T>(waiter: StoreWaiter, write: () => Promise<T>, what: string): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await write();
    } catch (err) {
      if (!(err instanceof StoreUnavailableError) || waiter.abandoned?.()) throw err;
      waiter.assertOwner();
      if (attempt === 0) waiter.log.warn({ err }, `store unavailable: ${what} wait for it`);
      await sleep(backoffDelay(attempt, DEPENDENCY_WAIT));
    }
  }
}
