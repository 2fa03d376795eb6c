import type { ClientSession, Collection, Db } from 'mongodb';

interface VersionDoc {
  _id: string;
  version: number;
}

const ID = 'runnable';

/**
 * The runnable set's version (`InstanceRepository.runnableVersion`): one counter document that each write
 * able to change the set bumps inside its own transaction, so a change and its bump commit together.
 * MongoDB has no triggers (SQLite's migration 16 does this there).
 */
export class MongoRunnableVersion {
  readonly #col: Collection<VersionDoc>;

  constructor(db: Db) {
    this.#col = db.collection<VersionDoc>('runnable_version');
  }

  /** The counter document, made once outside any transaction: transactions then only update it. */
  static async prepare(db: Db): Promise<void> {
    await db
      .collection<VersionDoc>('runnable_version')
      .updateOne({ _id: ID }, { $setOnInsert: { version: 0 } }, { upsert: true });
  }

  async read(): Promise<number> {
    return (await this.#col.findOne({ _id: ID }))?.version ?? 0;
  }

  async bump(session: ClientSession): Promise<void> {
    await this.#col.updateOne({ _id: ID }, { $inc: { version: 1 } }, { upsert: true, session });
  }
}
