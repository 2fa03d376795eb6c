import type Database from 'better-sqlite3';
import { FencedError } from '../../errors.js';
import type { OwnedStateOp } from '../records.js';
import type { OwnedStateRepository } from '../store.js';
import type { GroupCommit } from './group-commit.js';
import { prefixEnd } from '../key-prefix.js';

/**
 * An instance's owned state (session keys, outbox, labels, records): every write checks the owner epoch and
 * writes in one `BEGIN IMMEDIATE` transaction, so a superseded owner's write is refused, never interleaved.
 */
export class SqliteOwnedState implements OwnedStateRepository {
  constructor(
    private readonly db: Database.Database,
    /** Writes share a transaction with the others of their turn (one fsync). */
    private readonly group: GroupCommit,
  ) {}

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

  async list(instanceId: string, namespace: string, prefix?: string): Promise<Map<string, string>> {
    const rows = (
      prefix
        ? this.db
            .prepare(
              'SELECT key, value FROM owned_state WHERE instance_id = ? AND namespace = ? AND key >= ? AND key < ? ORDER BY key',
            )
            .all(instanceId, namespace, prefix, prefixEnd(prefix))
        : this.db
            .prepare('SELECT key, value FROM owned_state WHERE instance_id = ? AND namespace = ? ORDER BY key')
            .all(instanceId, namespace)
    ) as { key: string; value: string }[];
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
    await this.group.run(() => {
      this.#checkEpoch(instanceId, epoch);
      for (const op of ops) {
        if (op.value === null) del.run(instanceId, op.namespace, op.key);
        else put.run(instanceId, op.namespace, op.key, op.value);
      }
    });
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
