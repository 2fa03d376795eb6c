import Database from 'better-sqlite3';

/**
 * When each owner epoch of each instance first existed, read from the store the nodes share (not from
 * the nodes): a poll of `owner_epoch`, so an epoch's claim happened before the time it was first seen.
 */
export class EpochWatch {
  /** instance id → epoch → the first time (ms, wall clock) it was seen. */
  readonly seen = new Map<string, Map<number, number>>();
  readonly #db: Database.Database;
  readonly #timer: NodeJS.Timeout;

  constructor(file: string, everyMs = 20) {
    this.#db = new Database(file, { readonly: true, fileMustExist: true });
    this.#db.pragma('busy_timeout = 50');
    const query = this.#db.prepare('SELECT id, owner_epoch FROM instances');
    this.#timer = setInterval(() => {
      let rows: { id: string; owner_epoch: number }[];
      try {
        rows = query.all() as { id: string; owner_epoch: number }[];
      } catch {
        return; // the store locked (a fault of the run): the next poll reads it
      }
      const now = Date.now();
      for (const { id, owner_epoch: epoch } of rows) {
        let epochs = this.seen.get(id);
        if (!epochs) this.seen.set(id, (epochs = new Map()));
        if (!epochs.has(epoch)) epochs.set(epoch, now);
      }
    }, everyMs);
  }

  /** The first epoch above `epoch` seen at or before `at`, if any. */
  supersededAt(instanceId: string, epoch: number, at: number): { epoch: number; seenAt: number } | undefined {
    for (const [e, t] of this.seen.get(instanceId) ?? []) if (e > epoch && t <= at) return { epoch: e, seenAt: t };
    return undefined;
  }

  close(): void {
    clearInterval(this.#timer);
    this.#db.close();
  }
}
