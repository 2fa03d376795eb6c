import type { ClientSession, MongoClient } from 'mongodb';

/**
 * Runs `work` as one transaction: majority write concern, snapshot reads on the primary. The driver runs
 * it again on a transient conflict (another writer touched the same document), so `work` must only
 * write through `session`. This is the MongoDB form of SQLite's `BEGIN IMMEDIATE`.
 */
export async function inTransaction<T>(client: MongoClient, work: (session: ClientSession) => Promise<T>): Promise<T> {
  const session = client.startSession();
  try {
    let result: T | undefined;
    await session.withTransaction(
      async () => {
        result = await work(session);
      },
      { writeConcern: { w: 'majority' }, readConcern: { level: 'snapshot' }, readPreference: 'primary' },
    );
    return result as T;
  } finally {
    await session.endSession();
  }
}
