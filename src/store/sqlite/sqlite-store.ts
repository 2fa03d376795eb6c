import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { ConflictError, FencedError, QuotaExceededError } from '../../errors.js';
import type {
  AccountRecord,
  ConnectionInfo,
  InstanceConfig,
  InstanceRecord,
  InstanceSettings,
  OwnedStateOp,
  WebhookRecord,
} from '../records.js';
import type {
  AccountRepository,
  AccountWebhookRepository,
  BillingLedgerRepository,
  ChatbotRepository,
  ConfigBlock,
  DeliveryRepository,
  InstanceRepository,
  MediaBlobRepository,
  MessageRepository,
  OwnedStateRepository,
  Store,
  WebhookRepository,
} from '../store.js';
import { startMessagePruning } from '../message-retention.js';
import { AUTH_NAMESPACE } from '../namespaces.js';
import { SqliteAccountWebhooks, SqliteBillingLedger } from './sqlite-billing.js';
import { SqliteMediaBlobs } from './sqlite-media-blobs.js';
import { SqliteChatbots } from './sqlite-chatbots.js';
import { SqliteMessages } from './sqlite-messages.js';
import { SqliteDeliveries } from './sqlite-deliveries.js';
import { migrate } from './sqlite-migrations.js';

type Row = Record<string, unknown>;

const str = (row: Row, k: string): string => row[k] as string;

function toAccount(row: Row): AccountRecord {
  return {
    id: str(row, 'id'),
    name: str(row, 'name'),
    tokenHash: str(row, 'token_hash'),
    instanceQuota: row.instance_quota as number,
    allowedOrigins: JSON.parse(str(row, 'allowed_origins')) as string[],
    createdAt: str(row, 'created_at'),
  };
}

function toInstance(row: Row): InstanceRecord {
  return {
    id: str(row, 'id'),
    accountId: str(row, 'account_id'),
    name: str(row, 'name'),
    tokenHash: str(row, 'token_hash'),
    tokenSealed: str(row, 'token_sealed'),
    ownerEpoch: row.owner_epoch as number,
    config: JSON.parse(str(row, 'config')) as InstanceConfig,
    connection: JSON.parse(str(row, 'connection')) as ConnectionInfo,
    createdAt: str(row, 'created_at'),
  };
}

function toWebhook(row: Row): WebhookRecord {
  return {
    instanceId: str(row, 'instance_id'),
    label: str(row, 'label'),
    enabled: row.enabled === 1,
    url: str(row, 'url'),
    authorizationSealed: (row.authorization_sealed as string | null) ?? undefined,
    byEvents: row.by_events === 1,
    events: JSON.parse(str(row, 'events')) as string[],
    base64: row.base64 === 1,
    createdAt: str(row, 'created_at'),
    updatedAt: str(row, 'updated_at'),
  };
}

function isUniqueViolation(err: unknown): boolean {
  return (
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_UNIQUE' ||
    (err as { code?: string }).code === 'SQLITE_CONSTRAINT_PRIMARYKEY'
  );
}

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
  constructor(file: string, options: { busyTimeoutMs?: number; messageRetentionDays?: number } = {}) {
    if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
    this.#db = new Database(file);
    this.#db.pragma(`busy_timeout = ${options.busyTimeoutMs ?? 5000}`);
    this.#db.pragma('journal_mode = WAL');
    this.#db.pragma('synchronous = NORMAL');
    this.#db.pragma('foreign_keys = ON');
    migrate(this.#db);
    this.accounts = new SqliteAccounts(this.#db);
    this.instances = new SqliteInstances(this.#db);
    this.webhooks = new SqliteWebhooks(this.#db);
    this.ownedState = new SqliteOwnedState(this.#db);
    this.deliveries = new SqliteDeliveries(this.#db);
    this.messages = new SqliteMessages(this.#db);
    this.accountWebhooks = new SqliteAccountWebhooks(this.#db);
    this.billingLedger = new SqliteBillingLedger(this.#db);
    this.mediaBlobs = new SqliteMediaBlobs(this.#db);
    this.chatbots = new SqliteChatbots(this.#db);
    this.#stopPruning = startMessagePruning(this.messages, options.messageRetentionDays ?? 0);
  }

  async ping(): Promise<void> {
    this.#db.prepare('SELECT 1').get();
  }

  async close(): Promise<void> {
    this.#stopPruning();
    if (this.#db.open) this.#db.close();
  }
}

class SqliteAccounts implements AccountRepository {
  constructor(private readonly db: Database.Database) {}

  async create(a: AccountRecord): Promise<void> {
    try {
      this.db
        .prepare(
          `INSERT INTO accounts (id, name, token_hash, instance_quota, allowed_origins, created_at)
           VALUES (?, ?, ?, ?, ?, ?)`,
        )
        .run(a.id, a.name, a.tokenHash, a.instanceQuota, JSON.stringify(a.allowedOrigins), a.createdAt);
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('Account already exists');
      throw err;
    }
  }

  async #one(sql: string, ...args: unknown[]): Promise<AccountRecord | undefined> {
    const row = this.db.prepare(sql).get(...args) as Row | undefined;
    return row ? toAccount(row) : undefined;
  }

  async findById(id: string) {
    return this.#one('SELECT * FROM accounts WHERE id = ?', id);
  }

  async findByName(name: string) {
    return this.#one('SELECT * FROM accounts WHERE name = ?', name);
  }

  async findByTokenHash(tokenHash: string) {
    return this.#one('SELECT * FROM accounts WHERE token_hash = ?', tokenHash);
  }

  async list(): Promise<AccountRecord[]> {
    const rows = this.db.prepare('SELECT * FROM accounts ORDER BY created_at, name').all() as Row[];
    return rows.map(toAccount);
  }

  async replaceTokenHash(name: string, tokenHash: string): Promise<boolean> {
    const res = this.db.prepare('UPDATE accounts SET token_hash = ? WHERE name = ?').run(tokenHash, name);
    return res.changes === 1;
  }

  async count(): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number };
    return row.n;
  }
}

class SqliteInstances implements InstanceRepository {
  constructor(private readonly db: Database.Database) {}

  async create(i: InstanceRecord, webhooks: WebhookRecord[], quota: number): Promise<void> {
    const insertWebhook = this.db.prepare(WEBHOOK_UPSERT);
    const tx = this.db.transaction(() => {
      const { n } = this.db.prepare('SELECT COUNT(*) AS n FROM instances WHERE account_id = ?').get(i.accountId) as {
        n: number;
      };
      if (n >= quota) throw new QuotaExceededError();
      const taken = this.db
        .prepare('SELECT name = ? AS same_name FROM instances WHERE (account_id = ? AND name = ?) OR token_hash = ?')
        .get(i.name, i.accountId, i.name, i.tokenHash) as { same_name: number } | undefined;
      if (taken) {
        throw new ConflictError(
          taken.same_name === 1 ? 'Instance name already exists' : 'Instance token already in use',
        );
      }
      this.db
        .prepare(
          `INSERT INTO instances (id, account_id, name, token_hash, token_sealed, owner_epoch, config, connection, created_at)
           VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        )
        .run(
          i.id,
          i.accountId,
          i.name,
          i.tokenHash,
          i.tokenSealed,
          i.ownerEpoch,
          JSON.stringify(i.config),
          JSON.stringify(i.connection),
          i.createdAt,
        );
      for (const w of webhooks) insertWebhook.run(webhookParams(w));
    });
    tx.immediate();
  }

  async #one(sql: string, ...args: unknown[]): Promise<InstanceRecord | undefined> {
    const row = this.db.prepare(sql).get(...args) as Row | undefined;
    return row ? toInstance(row) : undefined;
  }

  async findById(id: string) {
    return this.#one('SELECT * FROM instances WHERE id = ?', id);
  }

  async findByName(accountId: string, name: string) {
    return this.#one('SELECT * FROM instances WHERE account_id = ? AND name = ?', accountId, name);
  }

  async findByTokenHash(tokenHash: string) {
    return this.#one('SELECT * FROM instances WHERE token_hash = ?', tokenHash);
  }

  async nameExists(name: string): Promise<boolean> {
    return this.db.prepare('SELECT 1 FROM instances WHERE name = ? LIMIT 1').get(name) !== undefined;
  }

  async listByAccount(accountId: string, names?: string[]): Promise<InstanceRecord[]> {
    if (names && names.length === 0) return [];
    const filter = names ? ` AND name IN (${names.map(() => '?').join(',')})` : '';
    const rows = this.db
      .prepare(`SELECT * FROM instances WHERE account_id = ?${filter} ORDER BY created_at, name`)
      .all(accountId, ...(names ?? [])) as Row[];
    return rows.map(toInstance);
  }

  async countByAccount(accountId: string): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM instances WHERE account_id = ?').get(accountId) as {
      n: number;
    };
    return row.n;
  }

  async listRunnable(): Promise<string[]> {
    const rows = this.db
      .prepare(
        `SELECT id FROM instances
         WHERE json_extract(connection, '$.state') IN ('connecting', 'qr', 'connected')
            OR EXISTS (SELECT 1 FROM owned_state s WHERE s.instance_id = instances.id AND s.namespace = ?)
         ORDER BY id`,
      )
      .all(AUTH_NAMESPACE) as { id: string }[];
    return rows.map((r) => r.id);
  }

  async delete(id: string): Promise<boolean> {
    const tx = this.db.transaction(() => {
      this.db.prepare('DELETE FROM owned_state WHERE instance_id = ?').run(id);
      this.db.prepare('DELETE FROM webhooks WHERE instance_id = ?').run(id);
      this.db.prepare('DELETE FROM messages WHERE instance_id = ?').run(id);
      // Pending deliveries still go out (the events happened); dead letters die with the instance.
      this.db.prepare("DELETE FROM webhook_deliveries WHERE instance_id = ? AND status = 'dead'").run(id);
      return this.db.prepare('DELETE FROM instances WHERE id = ?').run(id).changes === 1;
    });
    return tx.immediate();
  }

  async updateSettings(id: string, patch: Partial<InstanceSettings>): Promise<InstanceSettings | undefined> {
    const tx = this.db.transaction(() => {
      const row = this.db.prepare('SELECT config FROM instances WHERE id = ?').get(id) as
        { config: string } | undefined;
      if (!row) return undefined;
      const config = JSON.parse(row.config) as InstanceConfig;
      config.settings = { ...config.settings, ...patch };
      this.db.prepare('UPDATE instances SET config = ? WHERE id = ?').run(JSON.stringify(config), id);
      return config.settings;
    });
    return tx.immediate();
  }

  async updateConfigBlock<K extends ConfigBlock>(
    id: string,
    block: K,
    value: InstanceConfig[K] | undefined,
  ): Promise<boolean> {
    const tx = this.db.transaction(() => {
      const row = this.db.prepare('SELECT config FROM instances WHERE id = ?').get(id) as
        { config: string } | undefined;
      if (!row) return false;
      const config = JSON.parse(row.config) as InstanceConfig;
      config[block] = value;
      this.db.prepare('UPDATE instances SET config = ? WHERE id = ?').run(JSON.stringify(config), id);
      return true;
    });
    return tx.immediate();
  }

  async claim(id: string): Promise<number> {
    const row = this.db
      .prepare('UPDATE instances SET owner_epoch = owner_epoch + 1 WHERE id = ? RETURNING owner_epoch')
      .get(id) as { owner_epoch: number } | undefined;
    if (!row) throw new FencedError(id, 0);
    return row.owner_epoch;
  }

  async setConnection(id: string, epoch: number, connection: ConnectionInfo): Promise<void> {
    const res = this.db
      .prepare('UPDATE instances SET connection = ? WHERE id = ? AND owner_epoch = ?')
      .run(JSON.stringify(connection), id, epoch);
    if (res.changes !== 1) throw new FencedError(id, epoch);
  }
}

const WEBHOOK_UPSERT = `INSERT INTO webhooks
  (instance_id, label, enabled, url, authorization_sealed, by_events, events, base64, created_at, updated_at)
  VALUES (@instanceId, @label, @enabled, @url, @authorizationSealed, @byEvents, @events, @base64, @createdAt, @updatedAt)
  ON CONFLICT (instance_id, label) DO UPDATE SET enabled = excluded.enabled, url = excluded.url,
    authorization_sealed = excluded.authorization_sealed, by_events = excluded.by_events,
    events = excluded.events, base64 = excluded.base64, updated_at = excluded.updated_at`;

function webhookParams(w: WebhookRecord) {
  return {
    instanceId: w.instanceId,
    label: w.label,
    enabled: w.enabled ? 1 : 0,
    url: w.url,
    authorizationSealed: w.authorizationSealed ?? null,
    byEvents: w.byEvents ? 1 : 0,
    events: JSON.stringify(w.events),
    base64: w.base64 ? 1 : 0,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

class SqliteWebhooks implements WebhookRepository {
  constructor(private readonly db: Database.Database) {}

  async upsert(w: WebhookRecord): Promise<void> {
    this.db.prepare(WEBHOOK_UPSERT).run(webhookParams(w));
  }

  async list(instanceId: string): Promise<WebhookRecord[]> {
    const rows = this.db
      .prepare('SELECT * FROM webhooks WHERE instance_id = ? ORDER BY created_at, label')
      .all(instanceId) as Row[];
    return rows.map(toWebhook);
  }

  async delete(instanceId: string, label: string): Promise<boolean> {
    const res = this.db.prepare('DELETE FROM webhooks WHERE instance_id = ? AND label = ?').run(instanceId, label);
    return res.changes === 1;
  }
}

class SqliteOwnedState implements OwnedStateRepository {
  constructor(private readonly db: Database.Database) {}

  async get(instanceId: string, namespace: string, key: string): Promise<string | undefined> {
    const row = this.db
      .prepare('SELECT value FROM owned_state WHERE instance_id = ? AND namespace = ? AND key = ?')
      .get(instanceId, namespace, key) as { value: string } | undefined;
    return row?.value;
  }

  async getMany(instanceId: string, namespace: string, keys: string[]): Promise<Map<string, string>> {
    const stmt = this.db.prepare('SELECT value FROM owned_state WHERE instance_id = ? AND namespace = ? AND key = ?');
    const out = new Map<string, string>();
    for (const key of keys) {
      const row = stmt.get(instanceId, namespace, key) as { value: string } | undefined;
      if (row) out.set(key, row.value);
    }
    return out;
  }

  async list(instanceId: string, namespace: string): Promise<Map<string, string>> {
    const rows = this.db
      .prepare('SELECT key, value FROM owned_state WHERE instance_id = ? AND namespace = ? ORDER BY key')
      .all(instanceId, namespace) as { key: string; value: string }[];
    return new Map(rows.map((r) => [r.key, r.value]));
  }

  #checkEpoch(instanceId: string, epoch: number): void {
    const row = this.db.prepare('SELECT owner_epoch FROM instances WHERE id = ?').get(instanceId) as
      { owner_epoch: number } | undefined;
    if (row?.owner_epoch !== epoch) throw new FencedError(instanceId, epoch);
  }

  async write(instanceId: string, epoch: number, ops: OwnedStateOp[]): Promise<void> {
    const put = this.db.prepare(
      `INSERT INTO owned_state (instance_id, namespace, key, value) VALUES (?, ?, ?, ?)
       ON CONFLICT (instance_id, namespace, key) DO UPDATE SET value = excluded.value`,
    );
    const del = this.db.prepare('DELETE FROM owned_state WHERE instance_id = ? AND namespace = ? AND key = ?');
    const tx = this.db.transaction(() => {
      this.#checkEpoch(instanceId, epoch);
      for (const op of ops) {
        if (op.value === null) del.run(instanceId, op.namespace, op.key);
        else put.run(instanceId, op.namespace, op.key, op.value);
      }
    });
    tx.immediate();
  }

  async clear(instanceId: string, epoch: number, namespace?: string): Promise<void> {
    const tx = this.db.transaction(() => {
      this.#checkEpoch(instanceId, epoch);
      if (namespace === undefined) this.db.prepare('DELETE FROM owned_state WHERE instance_id = ?').run(instanceId);
      else {
        this.db.prepare('DELETE FROM owned_state WHERE instance_id = ? AND namespace = ?').run(instanceId, namespace);
      }
    });
    tx.immediate();
  }
}
