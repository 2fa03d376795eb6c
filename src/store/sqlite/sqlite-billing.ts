import type Database from 'better-sqlite3';
import type { AccountWebhookRecord, BillingLedgerEntry } from '../records.js';
import type { AccountWebhookRepository, BillingLedgerRepository } from '../store.js';

type Row = Record<string, unknown>;

function toWebhook(row: Row): AccountWebhookRecord {
  return {
    accountId: row.account_id as string,
    url: row.url as string,
    events: JSON.parse(row.events as string) as string[],
    enabled: row.enabled === 1,
    secretSealed: row.secret_sealed as string,
    createdAt: row.created_at as string,
    updatedAt: row.updated_at as string,
  };
}

function toEntry(row: Row): BillingLedgerEntry {
  return {
    key: row.key as string,
    accountId: row.account_id as string,
    event: row.event as string,
    description: row.description as string,
    data: row.data as string,
    createdAt: row.created_at as string,
    sentAt: (row.sent_at as string | null) ?? undefined,
  };
}

/** Account webhooks in SQLite (table `account_webhooks`, migration 5). */
export class SqliteAccountWebhooks implements AccountWebhookRepository {
  constructor(private readonly db: Database.Database) {}

  async get(accountId: string): Promise<AccountWebhookRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM account_webhooks WHERE account_id = ?').get(accountId) as
      Row | undefined;
    return row ? toWebhook(row) : undefined;
  }

  async save(w: AccountWebhookRecord): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO account_webhooks (account_id, url, events, enabled, secret_sealed, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (account_id) DO UPDATE SET url = excluded.url, events = excluded.events, enabled = excluded.enabled,
           secret_sealed = excluded.secret_sealed, updated_at = excluded.updated_at`,
      )
      .run(w.accountId, w.url, JSON.stringify(w.events), w.enabled ? 1 : 0, w.secretSealed, w.createdAt, w.updatedAt);
  }
}

/** The billing ledger in SQLite (table `billing_ledger`, migration 5): the primary key makes each event once. */
export class SqliteBillingLedger implements BillingLedgerRepository {
  constructor(private readonly db: Database.Database) {}

  async record(entries: BillingLedgerEntry[], leaseUntil: number): Promise<Set<string>> {
    const insert = this.db.prepare(
      `INSERT INTO billing_ledger (key, account_id, event, description, data, lease_until, created_at, sent_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (key) DO NOTHING`,
    );
    const inserted = new Set<string>();
    this.db
      .transaction(() => {
        for (const e of entries) {
          const res = insert.run(
            e.key,
            e.accountId,
            e.event,
            e.description,
            e.data,
            leaseUntil,
            e.createdAt,
            e.sentAt ?? null,
          );
          if (res.changes === 1) inserted.add(e.key);
        }
      })
      .immediate();
    return inserted;
  }

  async takeUnsent(now: number, max: number, leaseMs: number): Promise<BillingLedgerEntry[]> {
    // One statement: two takers can never both lease the same row.
    const rows = this.db
      .prepare(
        `UPDATE billing_ledger SET lease_until = ? WHERE key IN (
           SELECT key FROM billing_ledger WHERE sent_at IS NULL AND lease_until <= ? ORDER BY created_at LIMIT ?)
         RETURNING *`,
      )
      .all(now + leaseMs, now, max) as Row[];
    return rows.map(toEntry).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async markSent(keys: string[], at: string): Promise<void> {
    const mark = this.db.prepare('UPDATE billing_ledger SET sent_at = ? WHERE key = ?');
    this.db
      .transaction(() => {
        for (const key of keys) mark.run(at, key);
      })
      .immediate();
  }

  async list(accountId: string): Promise<BillingLedgerEntry[]> {
    const rows = this.db
      .prepare('SELECT * FROM billing_ledger WHERE account_id = ? ORDER BY created_at, key')
      .all(accountId) as Row[];
    return rows.map(toEntry);
  }
}
