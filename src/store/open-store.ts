import type { Logger } from 'pino';
import { join } from 'node:path';
import type { Config } from '../config/config.js';
import { MongoStore } from './mongo/mongo-store.js';
import { SqliteStore } from './sqlite/sqlite-store.js';
import type { Store } from './store.js';

export const SQLITE_FILE_NAME = 'switchboard.db';

/** MongoDB when MONGO_URL is set, otherwise the SQLite file under DATA_DIR. */
export async function openStore(
  config: Pick<
    Config,
    | 'mongoUrl'
    | 'mongoDb'
    | 'mongoConnectTimeoutMs'
    | 'mongoServerSelectionTimeoutMs'
    | 'sqliteBusyTimeoutMs'
    | 'sqliteSynchronous'
    | 'dataDir'
    | 'messageRetentionDays'
  >,
  log: Logger,
): Promise<Store> {
  const options = { messageRetentionDays: config.messageRetentionDays };
  if (config.mongoUrl) {
    return MongoStore.connect(config.mongoUrl, config.mongoDb, {
      ...options,
      connectTimeoutMs: config.mongoConnectTimeoutMs,
      serverSelectionTimeoutMs: config.mongoServerSelectionTimeoutMs,
      log,
    });
  }
  return new SqliteStore(join(config.dataDir, SQLITE_FILE_NAME), {
    ...options,
    busyTimeoutMs: config.sqliteBusyTimeoutMs,
    synchronous: config.sqliteSynchronous,
  });
}
