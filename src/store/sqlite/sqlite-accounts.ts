import type Database from 'better-sqlite3';
import { ConflictError } from '../../errors.js';
import type { AccountBrokers, AccountRecord, BrokerConfig } from '../records.js';
import type { AccountRepository } from '../store.js';

import { isUniqueViolation, str } from './sqlite-rows.js';
import type { Row } from './sqlite-rows.js';

function toAccount(row: Row): AccountRecord {
  return {
    id: str(row, 'id'),
    name: str(row, 'name'),
    tokenHash: str(row, 'token_hash'),
    instanceQuota: row.instance_quota as number,
    allowedOrigins: JSON.parse(str(row, 'allowed_origins')) as string[],
    createdAt: str(row, 'created_at'),
    ...(row.disabled_at ? { disabledAt: str(row, 'disabled_at') } : {}),
    ...(row.brokers ? { brokers: JSON.parse(str(row, 'brokers')) as AccountBrokers } : {}),
  };
}

export class SqliteAccounts implements AccountRepository {
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

  async setDisabled(name: string, disabledAt: string | undefined): Promise<AccountRecord | undefined> {
    const row = this.db
      .prepare('UPDATE accounts SET disabled_at = ? WHERE name = ? RETURNING *')
      .get(disabledAt ?? null, name) as Row | undefined;
    return row ? toAccount(row) : undefined;
  }

  async setBroker(id: string, broker: keyof AccountBrokers, config: BrokerConfig): Promise<boolean> {
    // One statement: two brokers' switches set at once on different nodes both stay.
    const res = this.db
      .prepare("UPDATE accounts SET brokers = json_set(COALESCE(brokers, '{}'), ?, json(?)) WHERE id = ?")
      .run(`$.${broker}`, JSON.stringify(config), id);
    return res.changes === 1;
  }

  async delete(id: string): Promise<boolean> {
    const tx = this.db.transaction(() => {
      const held = this.db.prepare('SELECT COUNT(*) AS n FROM instances WHERE account_id = ?').get(id) as { n: number };
      if (held.n > 0) throw new ConflictError('Account still has instances; delete them first or use force=true');
      this.db.prepare('DELETE FROM billing_ledger WHERE account_id = ?').run(id);
      // The account webhook goes with it (ON DELETE CASCADE).
      return this.db.prepare('DELETE FROM accounts WHERE id = ?').run(id).changes === 1;
    });
    return tx.immediate();
  }

  async count(): Promise<number> {
    const row = this.db.prepare('SELECT COUNT(*) AS n FROM accounts').get() as { n: number };
    return row.n;
  }
}
