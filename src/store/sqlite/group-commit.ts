import type Database from 'better-sqlite3';
import { TickBatcher } from '../../util/tick-batcher.js';

/**
 * Group commit for the hot writes (the chat history, owned state): the writes asked for during one turn of
 * the event loop run in one `BEGIN IMMEDIATE` transaction, each in a savepoint of its own. With
 * `synchronous = FULL` a commit costs an fsync, and many actors writing at once then share one. Each write
 * still succeeds or fails alone (a fenced owned write rolls back only itself), and its caller hears of it
 * only once the transaction is on the disk, exactly as if it had committed alone. The lock is taken when
 * the turn ends, so a write checks what it checks (the owner epoch) at that moment.
 */
export class GroupCommit {
  readonly #batcher: TickBatcher<() => void>;

  constructor(db: Database.Database) {
    this.#batcher = new TickBatcher(async (writes) => {
      const outcomes: unknown[] = [];
      db.transaction(() => {
        for (const write of writes) {
          try {
            db.transaction(write)();
            outcomes.push(undefined);
          } catch (err) {
            outcomes.push(err ?? new Error('the write failed'));
          }
        }
      }).immediate();
      return outcomes;
    });
  }

  /** Runs `write` (synchronous statements) in the next group's transaction; resolves once it committed. */
  async run<T>(write: () => T): Promise<T> {
    let result: T | undefined;
    await this.#batcher.add(() => {
      result = write();
    });
    return result as T;
  }
}
