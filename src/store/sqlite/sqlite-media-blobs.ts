import type Database from 'better-sqlite3';
import type { MediaBlob } from '../records.js';
import type { MediaBlobRepository } from '../store.js';

/** Received media in SQLite (table `media_blobs`, migration 6); the instance's deletion cascades to it. */
export class SqliteMediaBlobs implements MediaBlobRepository {
  constructor(private readonly db: Database.Database) {}

  async put(b: MediaBlob): Promise<void> {
    this.db
      .prepare(
        `INSERT INTO media_blobs (instance_id, message_id, data, expires_at) VALUES (?, ?, ?, ?)
         ON CONFLICT (instance_id, message_id) DO UPDATE SET data = excluded.data, expires_at = excluded.expires_at`,
      )
      .run(b.instanceId, b.messageId, b.data, b.expiresAt);
  }

  async get(instanceId: string, messageId: string, now: number): Promise<Buffer | undefined> {
    const row = this.db
      .prepare('SELECT data FROM media_blobs WHERE instance_id = ? AND message_id = ? AND expires_at > ?')
      .get(instanceId, messageId, now) as { data: Buffer } | undefined;
    return row?.data;
  }

  async prune(now: number): Promise<number> {
    return this.db.prepare('DELETE FROM media_blobs WHERE expires_at <= ?').run(now).changes;
  }
}
