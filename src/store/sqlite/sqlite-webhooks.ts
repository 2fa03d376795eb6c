import type Database from 'better-sqlite3';
import type { WebhookRecord } from '../records.js';
import type { WebhookRepository } from '../store.js';

import { str } from './sqlite-rows.js';
import type { Row } from './sqlite-rows.js';

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
    ...(row.secret_sealed ? { secretSealed: str(row, 'secret_sealed') } : {}),
    ...(row.previous_secret_sealed
      ? {
          previousSecretSealed: str(row, 'previous_secret_sealed'),
          previousSecretUntil: str(row, 'previous_secret_until'),
        }
      : {}),
    createdAt: str(row, 'created_at'),
    updatedAt: str(row, 'updated_at'),
  };
}

export const WEBHOOK_UPSERT = `INSERT INTO webhooks
  (instance_id, label, enabled, url, authorization_sealed, by_events, events, base64, secret_sealed,
   previous_secret_sealed, previous_secret_until, created_at, updated_at)
  VALUES (@instanceId, @label, @enabled, @url, @authorizationSealed, @byEvents, @events, @base64, @secretSealed,
   @previousSecretSealed, @previousSecretUntil, @createdAt, @updatedAt)
  ON CONFLICT (instance_id, label) DO UPDATE SET enabled = excluded.enabled, url = excluded.url,
    authorization_sealed = excluded.authorization_sealed, by_events = excluded.by_events,
    events = excluded.events, base64 = excluded.base64, secret_sealed = excluded.secret_sealed,
    previous_secret_sealed = excluded.previous_secret_sealed, previous_secret_until = excluded.previous_secret_until,
    updated_at = excluded.updated_at`;

export function webhookParams(w: WebhookRecord) {
  return {
    instanceId: w.instanceId,
    label: w.label,
    enabled: w.enabled ? 1 : 0,
    url: w.url,
    authorizationSealed: w.authorizationSealed ?? null,
    byEvents: w.byEvents ? 1 : 0,
    events: JSON.stringify(w.events),
    base64: w.base64 ? 1 : 0,
    secretSealed: w.secretSealed ?? null,
    previousSecretSealed: w.previousSecretSealed ?? null,
    previousSecretUntil: w.previousSecretUntil ?? null,
    createdAt: w.createdAt,
    updatedAt: w.updatedAt,
  };
}

export class SqliteWebhooks implements WebhookRepository {
  constructor(private readonly db: Database.Database) {}

  async upsert(w: WebhookRecord, limits?: { maxEnabled: number }): Promise<boolean> {
    const others = this.db.prepare(
      'SELECT COUNT(*) AS n FROM webhooks WHERE instance_id = ? AND label != ? AND enabled = 1',
    );
    return this.db
      .transaction(() => {
        if (limits && w.enabled && (others.get(w.instanceId, w.label) as { n: number }).n >= limits.maxEnabled) {
          return false;
        }
        this.db.prepare(WEBHOOK_UPSERT).run(webhookParams(w));
        return true;
      })
      .immediate();
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
