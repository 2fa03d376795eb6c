import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import type {
  AccountRepository,
  AccountWebhookRepository,
  BillingLedgerRepository,
  ChatbotRepository,
  DeliveryRepository,
  InstanceRepository,
  MediaBlobRepository,
  MessageRepository,
  OwnedStateRepository,
  Store,
  WebhookRepository,
} from '../store.js';
import { startMessagePruning } from '../message-retention.js';
import { SqliteAccountWebhooks, SqliteBillingLedger } from './sqlite-billing.js';
import { SqliteMediaBlobs } from './sqlite-media-blobs.js';
import { SqliteChatbots } from './sqlite-chatbots.js';
import { SqliteMessages } from './sqlite-messages.js';
import { SqliteDeliveries } from './sqlite-deliveries.js';
import { migrate } from './sqlite-migrations.js';
import { guardOutages } from '../store-outage.js';
import { isSqliteOutage } from './sqlite-outage.js';

import { SqliteAccounts } from './sqlite-accounts.js';
import { GroupCommit } from './group-commit.js';
import { SqliteInstances } from './sqlite-instances.js';
import { SqliteWebhooks } from './sqlite-webhooks.js';
import { SqliteOwnedState } from './sqlite-owned-state.js';
import { cacheStatements } from './statement-cache.js';
import { SYNC_BUSY_MS, waitOutBusy } from './busy-wait.js';

/**
 * SQLite store (better-sqlite3). WAL mode and a busy timeout let several processes on one host share the
 * file; every multi-statement write runs in a `BEGIN IMMEDIATE` transaction so that the check and the
 * write cannot interleave with another process.
 */
export class SqliteStore implements Store {
  readonly kind = 'sqlite' as const;
  readonly accounts: AccountRepository;
  readonly instances: InstanceRepository;
  readonly webhooks: WebhookRepository;
  readonly ownedState: OwnedStateRepository;
  readonly deliveries: DeliveryRepository;
  readonly messages: MessageRepository;
  readonly accountWebhooks: AccountWebhookRepository;
  readonly billingLedger: BillingLedgerRepository;
  readonly mediaBlobs: MediaBlobRepository;
  readonly chatbots: ChatbotRepository;
  readonly #db: Database.Database;
  readonly #stopPruning: () => void;

  /** `messageRetentionDays` > 0 prunes the history about every hour. */
  constructor(
    file: string,
    options: { busyTimeoutMs?: number; messageRetentionDays?: number; synchronous?: 'full' | 'normal' } = {},
  ) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    const busyTimeoutMs = options.busyTimeoutMs ?? 5000;
    // Opening waits for the lock as long as a call may (nodes starting together migrate one at a time).
    this.#db.pragma(`busy_timeout = ${busyTimeoutMs}`);
    this.#db.pragma('journal_mode = WAL');
    // FULL: a commit is on the disk before the write is acknowledged, so a power loss cannot take it back.
    this.#db.pragma(`synchronous = ${options.synchronous === 'normal' ? 'NORMAL' : 'FULL'}`);
    this.#db.pragma('foreign_keys = ON');
    migrate(this.#db);
    cacheStatements(this.#db);
    // From here a call waits for the lock on the event loop (waitOutBusy), SQLite itself only briefly.
    this.#db.pragma(`busy_timeout = ${Math.min(busyTimeoutMs, SYNC_BUSY_MS)}`);
    // A file locked past the busy timeout or a failing disk answers 503, as an unreachable MongoDB does.
    const guard = <R extends object>(repository: R) =>
      guardOutages(waitOutBusy(repository, busyTimeoutMs), isSqliteOutage);
    const group = new GroupCommit(this.#db);
    this.accounts = guard(new SqliteAccounts(this.#db));
    this.instances = guard(new SqliteInstances(this.#db, busyTimeoutMs));
    this.webhooks = guard(new SqliteWebhooks(this.#db));
    this.ownedState = guard(new SqliteOwnedState(this.#db, group));
    this.deliveries = guard(new SqliteDeliveries(this.#db));
    this.messages = guard(new SqliteMessages(this.#db, group));
    this.accountWebhooks = guard(new SqliteAccountWebhooks(this.#db));
    this.billingLedger = guard(new SqliteBillingLedger(this.#db));
    this.mediaBlobs = guard(new SqliteMediaBlobs(this.#db));
    this.chatbots = guard(new SqliteChatbots(this.#db));
    this.#stopPruning = startMessagePruning(this.messages, options.messageRetentionDays ?? 0);
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').get();
  }

  /** The connection's `synchronous` mode: what an acknowledged commit survives (SQLITE_SYNCHRONOUS). */
  synchronousMode(): 'off' | 'normal' | 'full' | 'extra' {
    const level = this.#db.pragma('synchronous', { simple: true }) as number;
    return (['off', 'normal', 'full', 'extra'] as const)[level] ?? 'full';
  }

  async close(): Promise<void> {
    this.#stopPruning();
    if (this.#db.open) this.#db.close();
  }
}
