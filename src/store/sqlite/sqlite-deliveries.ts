import type Database from 'better-sqlite3';
import type { DeliveryRepository, DeliveryRow, DeliverySettlement, EmissionClaim } from '../store.js';

type Row = Record<string, unknown>;
const str = (row: Row, k: string): string => row[k] as string;

function toDelivery(row: Row): DeliveryRow {
  return {
    id: str(row, 'id'),
    instanceId: str(row, 'instance_id'),
    payload: str(row, 'payload'),
    attempts: row.attempts as number,
    lastError: (row.last_error as string | null) ?? undefined,
    createdAt: str(row, 'created_at'),
    updatedAt: str(row, 'updated_at'),
  };
}

/** The webhook outbox in SQLite (table `webhook_deliveries`, migration 2). */
export class SqliteDeliveries implements DeliveryRepository {
  constructor(private readonly db: Database.Database) {}

  async insert(rows: DeliveryRow[], dueAt: number): Promise<void> {
    if (rows.length === 0) return;
    this.db.transaction(() => this.#insertRows(rows, dueAt)).immediate();
  }

  // Not group-committed: the claim is decided inside its own IMMEDIATE transaction, so two processes
  // claiming one message are serialised by SQLite's write lock and one of them finds it marked.
  async insertOnce(rows: DeliveryRow[], dueAt: number, claim: EmissionClaim): Promise<boolean> {
    const { instanceId, messageId, at, owed } = claim;
    const read = this.db.prepare('SELECT emitted_at FROM messages WHERE instance_id = ? AND id = ?');
    const mark = this.db.prepare('UPDATE messages SET emitted_at = ?, owed = ? WHERE instance_id = ? AND id = ?');
    return this.db
      .transaction(() => {
        const row = read.get(instanceId, messageId) as { emitted_at: number | null } | undefined;
        if (row?.emitted_at != null) return false;
        if (row) mark.run(at, owed ?? null, instanceId, messageId);
        this.#insertRows(rows, dueAt);
        return true;
      })
      .immediate();
  }

  #insertRows(rows: DeliveryRow[], dueAt: number): void {
    const stmt = this.db.prepare(
      `INSERT INTO webhook_deliveries (id, instance_id, status, due_at, attempts, payload, last_error, created_at, updated_at)
       VALUES (?, ?, 'pending', ?, ?, ?, ?, ?, ?) ON CONFLICT (id) DO NOTHING`,
    );
    for (const r of rows) {
      stmt.run(r.id, r.instanceId, dueAt, r.attempts, r.payload, r.lastError ?? null, r.createdAt, r.updatedAt);
    }
  }

  async take(now: number, max: number, leaseMs: number): Promise<DeliveryRow[]> {
    // One statement: the claim and the read cannot interleave with another process's claim.
    const rows = this.db
      .prepare(
        `UPDATE webhook_deliveries SET lease_until = ? WHERE id IN (
           SELECT id FROM webhook_deliveries WHERE status = 'pending' AND due_at <= ? AND lease_until <= ?
           ORDER BY due_at, created_at LIMIT ?)
         RETURNING *`,
      )
      .all(now + leaseMs, now, now, max) as Row[];
    return rows.map(toDelivery).sort((a, b) => a.createdAt.localeCompare(b.createdAt));
  }

  async settle(settlements: DeliverySettlement[]): Promise<void> {
    if (settlements.length === 0) return;
    const remove = this.db.prepare('DELETE FROM webhook_deliveries WHERE id = ?');
    const reschedule = this.db.prepare(
      'UPDATE webhook_deliveries SET due_at = ?, lease_until = 0, attempts = ?, last_error = ?, updated_at = ? WHERE id = ?',
    );
    const bury = this.db.prepare(
      "UPDATE webhook_deliveries SET status = 'dead', lease_until = 0, attempts = ?, last_error = ?, updated_at = ? WHERE id = ?",
    );
    const now = new Date().toISOString();
    this.db
      .transaction(() => {
        for (const s of settlements) {
          if (s.outcome === 'completed') remove.run(s.id);
          else if (s.outcome === 'rescheduled') reschedule.run(s.dueAt, s.attempts, s.lastError, now, s.id);
          else bury.run(s.attempts, s.lastError, now, s.id);
        }
      })
      .immediate();
  }

  async listDead(instanceId: string): Promise<DeliveryRow[]> {
    const rows = this.db
      .prepare("SELECT * FROM webhook_deliveries WHERE instance_id = ? AND status = 'dead' ORDER BY created_at")
      .all(instanceId) as Row[];
    return rows.map(toDelivery);
  }

  async revive(instanceId: string, ids: string[] | undefined, now: number): Promise<number> {
    const filter = ids ? ` AND id IN (${ids.map(() => '?').join(',')})` : '';
    if (ids?.length === 0) return 0;
    const res = this.db
      .prepare(
        `UPDATE webhook_deliveries SET status = 'pending', due_at = ?, lease_until = 0, attempts = 0, updated_at = ?
         WHERE instance_id = ? AND status = 'dead'${filter}`,
      )
      .run(now, new Date(now).toISOString(), instanceId, ...(ids ?? []));
    return res.changes;
  }

  async countPending(): Promise<number> {
    return (
      this.db.prepare("SELECT COUNT(*) AS n FROM webhook_deliveries WHERE status = 'pending'").get() as { n: number }
    ).n;
  }
}
