import {
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
} from 'mongodb';
import type { OutageTest } from '../store-outage.js';

/**
 * The server cannot be reached (no server selected within MONGO_SERVER_SELECTION_TIMEOUT_MS, a dropped or
 * timed-out connection, a closed client), or it answered with a label that says "try again later" (a
 * primary stepping down, a transaction aborted by a failover) after the driver's own retry.
 */
export const isMongoOutage: OutageTest = (err) =>
  err instanceof MongoServerSelectionError ||
  err instanceof MongoNetworkError ||
  err instanceof MongoNotConnectedError ||
  err instanceof MongoTopologyClosedError ||
  err instanceof MongoOperationTimeoutError ||
  (err instanceof MongoError &&
    (err.hasErrorLabel('TransientTransactionError') || err.hasErrorLabel('RetryableWriteError')));
