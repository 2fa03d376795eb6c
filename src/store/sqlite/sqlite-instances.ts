import { setImmediate as turn } from 'node:timers/promises';
import type Database from 'better-sqlite3';
import { ConflictError, FencedError, QuotaExceededError } from '../../errors.js';
import type {
  ConnectionInfo,
  InstanceConfig,
  InstanceOwnership,
  InstanceRecord,
  InstanceSettings,
  NodeHeartbeat,
  OwnerHolder,
  WebhookRecord,
} from '../records.js';
import type { ConfigBlock, InstanceRepository } from '../store.js';
import { AUTH_NAMESPACE } from '../namespaces.js';

import { retryWhileBusy } from './busy-wait.js';
import { isUniqueViolation, str } from './sqlite-rows.js';
import type { Row } from './sqlite-rows.js';
import { WEBHOOK_UPSERT, webhookParams } from './sqlite-webhooks.js';

/** Rows per read of a whole listing: a few milliseconds of the event loop each. */
const READ_PAGE = 2000;

/** Instances claimed per transaction: a transaction holds the file's write lock for every process. */
const CLAIM_CHUNK = 1000;

/** Byte order of two strings, as SQLite's ORDER BY on TEXT (BINARY collation) gives them. */
function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
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

export class SqliteInstances implements InstanceRepository {
  constructor(
    private readonly db: Database.Database,
    /** How long one claim transaction waits for another process's lock (SQLITE_BUSY_TIMEOUT_MS). */
    private readonly busyTimeoutMs = 0,
  ) {}

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
    if (names) {
      const rows = this.db
        .prepare(
          `SELECT * FROM instances WHERE account_id = ? AND name IN (${names.map(() => '?').join(',')}) ORDER BY created_at, name`,
        )
        .all(accountId, ...names) as Row[];
      return rows.map(toInstance);
    }
    // A whole account may hold 100,000 instances: read in pages by rowid (each row once, even one renamed
    // meanwhile), the event loop free between them, then put in the listing's order.
    const out: InstanceRecord[] = [];
    const page = this.db.prepare(
      'SELECT rowid AS rid, * FROM instances WHERE account_id = ? AND rowid > ? ORDER BY rowid LIMIT ?',
    );
    for (let after = 0; ; await turn()) {
      const rows = page.all(accountId, after, READ_PAGE) as Row[];
      for (const row of rows) out.push(toInstance(row));
      if (rows.length < READ_PAGE) break;
      after = rows[rows.length - 1]!.rid as number;
    }
    return out.sort((a, b) => compare(a.createdAt, b.createdAt) || compare(a.name, b.name));
  }

  async countByAccount(accountId: string): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM instances WHERE account_id = ?').get(accountId) as {
      n: number;
    };
    return row.n;
  }

  async runnableVersion(): Promise<number> {
    return (this.db.prepare('SELECT version FROM runnable_version').get() as { version: number }).version;
  }

  async listRunnable(): Promise<string[]> {
    // Read in pages, the event loop free between them: one read of 100,000 rows held a node for a second.
    const page = this.db.prepare(
      `SELECT id FROM instances
       WHERE id > ?
         AND (json_extract(connection, '$.state') IN ('connecting', 'qr', 'connected')
          OR EXISTS (SELECT 1 FROM owned_state s WHERE s.instance_id = instances.id AND s.namespace = ?))
         AND NOT EXISTS (SELECT 1 FROM accounts a WHERE a.id = instances.account_id AND a.disabled_at IS NOT NULL)
       ORDER BY id LIMIT ?`,
    );
    const ids: string[] = [];
    for (let after = ''; ; await turn()) {
      const rows = page.all(after, AUTH_NAMESPACE, READ_PAGE) as { id: string }[];
      for (const row of rows) ids.push(row.id);
      if (rows.length < READ_PAGE) break;
      after = rows[rows.length - 1]!.id;
    }
    return ids;
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
    epoch?: number,
  ): Promise<boolean> {
    const tx = this.db.transaction(() => {
      const row = this.db.prepare('SELECT config, owner_epoch FROM instances WHERE id = ?').get(id) as
        { config: string; owner_epoch: number } | undefined;
      if (!row) return false;
      if (epoch !== undefined && row.owner_epoch !== epoch) throw new FencedError(id, epoch);
      const config = JSON.parse(row.config) as InstanceConfig;
      config[block] = value;
      this.db.prepare('UPDATE instances SET config = ? WHERE id = ?').run(JSON.stringify(config), id);
      return true;
    });
    return tx.immediate();
  }

  async replaceToken(id: string, tokenHash: string, tokenSealed: string): Promise<boolean> {
    try {
      const res = this.db
        .prepare('UPDATE instances SET token_hash = ?, token_sealed = ? WHERE id = ?')
        .run(tokenHash, tokenSealed, id);
      return res.changes === 1;
    } catch (err) {
      if (isUniqueViolation(err)) throw new ConflictError('Token already in use');
      throw err;
    }
  }

  async claim(id: string, holder?: OwnerHolder): Promise<number> {
    const row = this.db
      .prepare(
        `UPDATE instances SET owner_epoch = owner_epoch + 1, owner_node = ?, owner_token = ?
         WHERE id = ? RETURNING owner_epoch`,
      )
      .get(holder?.node ?? null, holder?.token ?? null, id) as { owner_epoch: number } | undefined;
    if (!row) throw new FencedError(id, 0);
    return row.owner_epoch;
  }

  async ownership(ids: string[]): Promise<Map<string, InstanceOwnership>> {
    const out = new Map<string, InstanceOwnership>();
    const read = this.db.prepare('SELECT owner_epoch, owner_node, owner_token FROM instances WHERE id = ?');
    for (const id of ids) {
      const row = read.get(id) as
        { owner_epoch: number; owner_node: string | null; owner_token: string | null } | undefined;
      if (!row) continue;
      out.set(id, {
        epoch: row.owner_epoch,
        ...(row.owner_node !== null && row.owner_token !== null
          ? { holder: { node: row.owner_node, token: row.owner_token } }
          : {}),
      });
    }
    return out;
  }

  async claimFrom(claims: { id: string; epoch: number }[], holder: OwnerHolder): Promise<Map<string, number>> {
    const take = this.db.prepare(
      `UPDATE instances SET owner_epoch = owner_epoch + 1, owner_node = ?, owner_token = ?
       WHERE id = ? AND owner_epoch = ? RETURNING owner_epoch`,
    );
    // A failover takes thousands of instances: a few transactions (one fsync each) instead of one per
    // instance, none holding the file's write lock long enough to keep the other processes' writes waiting.
    const taken = new Map<string, number>();
    const claimAll = this.db.transaction((batch: { id: string; epoch: number }[]) => {
      for (const c of batch) {
        const row = take.get(holder.node, holder.token, c.id, c.epoch) as { owner_epoch: number } | undefined;
        if (row) taken.set(c.id, row.owner_epoch);
      }
    });
    for (let i = 0; i < claims.length; i += CLAIM_CHUNK) {
      if (i > 0) await turn();
      try {
        const chunk = claims.slice(i, i + CLAIM_CHUNK);
        // After the first transaction a busy lock is waited out here: failing would lose what it took.
        if (i === 0) claimAll.immediate(chunk);
        else await retryWhileBusy(() => claimAll.immediate(chunk), this.busyTimeoutMs);
      } catch (err) {
        // What the earlier transactions took is taken: the caller must hear of it (the rest waits a pass).
        if (taken.size > 0) return taken;
        throw err;
      }
    }
    return taken;
  }

  async release(id: string, epoch: number): Promise<void> {
    this.db
      .prepare('UPDATE instances SET owner_node = NULL, owner_token = NULL WHERE id = ? AND owner_epoch = ?')
      .run(id, epoch);
  }

  // One host's file: every process reads the same clock, which is the store's.
  async heartbeat(holder: OwnerHolder): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO node_heartbeats (node, token, at) VALUES (?, ?, ?)
         ON CONFLICT (node) DO UPDATE SET token = excluded.token, at = excluded.at`,
      )
      .run(holder.node, holder.token, Date.now());
  }

  async heartbeats(nodes: string[]): Promise<Map<string, NodeHeartbeat>> {
    const beats = new Map<string, NodeHeartbeat>();
    if (nodes.length === 0) return beats;
    const now = Date.now();
    const rows = this.db
      .prepare(`SELECT node, token, at FROM node_heartbeats WHERE node IN (${nodes.map(() => '?').join(',')})`)
      .all(...nodes) as { node: string; token: string; at: number }[];
    for (const r of rows) beats.set(r.node, { token: r.token, ageMs: Math.max(0, now - r.at) });
    return beats;
  }

  async endHeartbeat(holder: OwnerHolder): Promise<void> {
    this.db.prepare('DELETE FROM node_heartbeats WHERE node = ? AND token = ?').run(holder.node, holder.token);
  }

  async setConnection(id: string, epoch: number, connection: ConnectionInfo): Promise<void> {
    const res = this.db
      .prepare('UPDATE instances SET connection = ? WHERE id = ? AND owner_epoch = ?')
      .run(JSON.stringify(connection), id, epoch);
    if (res.changes !== 1) throw new FencedError(id, epoch);
  }
}
