import { setTimeout as sleep } from 'node:timers/promises';

/** How long SQLite itself may wait for the file's lock, synchronously, before a call waits on the event loop. */
export const SYNC_BUSY_MS = 20;
/** The longest pause between two tries of a call that found the file locked. */
const MAX_PAUSE_MS = 50;

/** Whether `err` is SQLite's "the file is locked by another connection" (SQLITE_BUSY and its extended codes). */
export function isBusy(err: unknown): boolean {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && (code === 'SQLITE_BUSY' || code.startsWith('SQLITE_BUSY_'));
}

/**
 * The repository with every call that found the file locked tried again after a pause, until `budgetMs`
 * has passed since the call began. better-sqlite3 waits for a lock synchronously: with several node
 * processes on one file, a node's event loop stood still for seconds behind another process's write, and
 * lost its lease. SQLite now waits at most SYNC_BUSY_MS at a time, and the rest of the wait is a timer.
 *
 * A retry is safe because a busy call did nothing: in WAL mode only taking the write lock (BEGIN IMMEDIATE,
 * or an autocommit write) or a rare read is refused busy, and every repository method is one transaction,
 * one statement or reads (claimFrom, which commits in several transactions, waits out each one's lock itself
 * and returns what it took instead of failing once it took something).
 */
export function waitOutBusy<R extends object>(repository: R, budgetMs: number, now = () => performance.now()): R {
  return new Proxy(repository, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]): unknown => {
        const call = () => (value as (...a: unknown[]) => unknown).apply(target, args);
        const first = call();
        if (!(first instanceof Promise) || budgetMs <= 0) return first;
        return retryWhileBusy(call as () => Promise<unknown>, budgetMs, now, first);
      };
    },
  });
}

/**
 * `call()` (or `first`, its first try already made), tried again after a pause (5 ms, doubling to
 * MAX_PAUSE_MS) while it fails busy, until `budgetMs` has passed; any other error at once.
 */
export async function retryWhileBusy<T>(
  call: () => T | Promise<T>,
  budgetMs: number,
  now = () => performance.now(),
  first?: Promise<T>,
): Promise<T> {
  const started = now();
  let attempt: T | Promise<T> | undefined = first;
  for (let pauseMs = 5; ; pauseMs = Math.min(MAX_PAUSE_MS, pauseMs * 2)) {
    try {
      return await (attempt ?? call());
    } catch (err) {
      if (!isBusy(err) || now() - started + pauseMs > budgetMs) throw err;
      await sleep(pauseMs);
      attempt = undefined;
    }
  }
}
