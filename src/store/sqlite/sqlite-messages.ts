import type Database from 'better-sqlite3';
import { MESSAGE_STATUS_RANK } from '../records.js';
import type { ChatCursor, ChatSummary, HistoryCursor, MessageRecord, MessageStatus } from '../records.js';
import type { MessageRepository } from '../store.js';
import type { GroupCommit } from './group-commit.js';

type Row = Record<string, unknown>;

function toMessage(row: Row): MessageRecord {
  return {
    instanceId: row.instance_id as string,
    id: row.id as string,
    chatJid: row.chat_jid as string,
    fromMe: row.from_me === 1,
    senderJid: row.sender_jid as string,
    timestamp: row.timestamp as number,
    type: row.type as string,
    text: row.text as string,
    media: row.media === null ? undefined : (JSON.parse(row.media as string) as MessageRecord['media']),
    ...(row.status ? { status: row.status as MessageStatus } : {}),
    ...(row.source ? { source: row.source as string } : {}),
    ...(row.emitted_at != null ? { emittedAt: row.emitted_at as number } : {}),
  };
}

/** The chat history in SQLite (table `messages`, migration 3); the instance's deletion cascades to it. */
export class SqliteMessages implements MessageRepository {
  constructor(
    private readonly db: Database.Database,
    /** The history's writes share a transaction with the others of their turn (one fsync). */
    private readonly group: GroupCommit,
  ) {}

  async save(m: MessageRecord): Promise<void> {
    await this.group.run(() => this.#save(m));
  }

  #save(m: MessageRecord): void {
    this.db
      .prepare(
        `INSERT INTO messages (instance_id, id, chat_jid, from_me, sender_jid, timestamp, type, text, media, status, source)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
         ON CONFLICT (instance_id, id) DO UPDATE SET chat_jid = excluded.chat_jid, from_me = excluded.from_me,
           sender_jid = excluded.sender_jid, timestamp = excluded.timestamp, type = excluded.type,
           text = excluded.text, media = excluded.media, status = COALESCE(messages.status, excluded.status),
           source = COALESCE(excluded.source, messages.source)`,
      )
      .run(
        m.instanceId,
        m.id,
        m.chatJid,
        m.fromMe ? 1 : 0,
        m.senderJid,
        m.timestamp,
        m.type,
        m.text,
        m.media ? JSON.stringify(m.media) : null,
        m.status ?? null,
        m.source ?? null,
      );
  }

  async owed(instanceId: string, limit: number): Promise<{ id: string; owed: string }[]> {
    return this.db
      .prepare(
        'SELECT id, owed FROM messages WHERE instance_id = ? AND owed IS NOT NULL ORDER BY timestamp, id LIMIT ?',
      )
      .all(instanceId, limit) as { id: string; owed: string }[];
  }

  async isOwed(instanceId: string, id: string): Promise<boolean> {
    return (
      this.db
        .prepare('SELECT 1 FROM messages WHERE instance_id = ? AND id = ? AND owed IS NOT NULL')
        .get(instanceId, id) !== undefined
    );
  }

  async settleOwed(instanceId: string, id: string): Promise<boolean> {
    return this.group.run(
      () =>
        this.db
          .prepare('UPDATE messages SET owed = NULL WHERE instance_id = ? AND id = ? AND owed IS NOT NULL')
          .run(instanceId, id).changes === 1,
    );
  }

  async setStatus(instanceId: string, ids: string[], status: MessageStatus): Promise<void> {
    const read = this.db.prepare('SELECT status FROM messages WHERE instance_id = ? AND id = ?');
    const write = this.db.prepare('UPDATE messages SET status = ? WHERE instance_id = ? AND id = ?');
    await this.group.run(() => {
      for (const id of ids) {
        const row = read.get(instanceId, id) as { status: MessageStatus | null } | undefined;
        if (!row) continue;
        if (row.status === null || MESSAGE_STATUS_RANK[row.status] < MESSAGE_STATUS_RANK[status]) {
          write.run(status, instanceId, id);
        }
      }
    });
  }

  async find(instanceId: string, id: string): Promise<MessageRecord | undefined> {
    const row = this.db.prepare('SELECT * FROM messages WHERE instance_id = ? AND id = ?').get(instanceId, id) as
      Row | undefined;
    return row ? toMessage(row) : undefined;
  }

  async list(
    instanceId: string,
    q: { chatJid?: string; before?: HistoryCursor; limit: number },
  ): Promise<MessageRecord[]> {
    const where = ['instance_id = ?'];
    const args: unknown[] = [instanceId];
    if (q.chatJid !== undefined) {
      where.push('chat_jid = ?');
      args.push(q.chatJid);
    }
    if (q.before?.id !== undefined) {
      where.push('(timestamp < ? OR (timestamp = ? AND id < ?))');
      args.push(q.before.timestamp, q.before.timestamp, q.before.id);
    } else if (q.before) {
      where.push('timestamp < ?');
      args.push(q.before.timestamp);
    }
    const rows = this.db
      .prepare(`SELECT * FROM messages WHERE ${where.join(' AND ')} ORDER BY timestamp DESC, id DESC LIMIT ?`)
      .all(...args, q.limit) as Row[];
    return rows.map(toMessage);
  }

  async clearChat(instanceId: string, chatJid: string): Promise<number> {
    return this.db.prepare('DELETE FROM messages WHERE instance_id = ? AND chat_jid = ?').run(instanceId, chatJid)
      .changes;
  }

  async chats(instanceId: string, q: { before?: ChatCursor; limit: number }): Promise<ChatSummary[]> {
    const after = q.before ? 'HAVING last < ? OR (last = ? AND chat_jid < ?)' : '';
    const args = q.before ? [q.before.lastMessageAt, q.before.lastMessageAt, q.before.chatJid] : [];
    const rows = this.db
      .prepare(
        `SELECT chat_jid, MAX(timestamp) AS last,
           SUM(CASE WHEN from_me = 0 AND status = 'received' THEN 1 ELSE 0 END) AS unread
         FROM messages WHERE instance_id = ? GROUP BY chat_jid ${after}
         ORDER BY last DESC, chat_jid DESC LIMIT ?`,
      )
      .all(instanceId, ...args, q.limit) as { chat_jid: string; last: number; unread: number }[];
    return rows.map((r) => ({ chatJid: r.chat_jid, lastMessageAt: r.last, unread: r.unread }));
  }

  async delete(instanceId: string, id: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM messages WHERE instance_id = ? AND id = ?').run(instanceId, id).changes === 1;
  }

  async prune(before: number): Promise<number> {
    return this.db.prepare('DELETE FROM messages WHERE timestamp < ?').run(before).changes;
  }
}
