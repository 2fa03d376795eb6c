import type { OutageTest } from '../store-outage.js';

/**
 * SQLite result codes (with their extended forms, like SQLITE_IOERR_WRITE) that mean the file cannot be
 * used now: locked by another process past the busy timeout, an I/O error, a full disk, an unopenable file.
 */
const OUTAGE_CODES = [
  'SQLITE_BUSY',
  'SQLITE_LOCKED',
  'SQLITE_IOERR',
  'SQLITE_FULL',
  'SQLITE_CANTOPEN',
  'SQLITE_PROTOCOL',
];

export const isSqliteOutage: OutageTest = (err) => {
  const code = (err as { code?: unknown } | undefined)?.code;
  return typeof code === 'string' && OUTAGE_CODES.some((c) => code === c || code.startsWith(`${c}_`));
};
