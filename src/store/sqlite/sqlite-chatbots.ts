import type Database from 'better-sqlite3';
import { ConflictError } from '../../errors.js';
import { chatbotTriggerKey } from '../chatbot-trigger-key.js';
import type { ChatbotBotRecord, ChatbotLinkRecord } from '../records.js';
import type { ChatbotRepository } from '../store.js';

type Row = { bot: string };

/** JSON drops `undefined`; records keep every key. */
function toBot(raw: string): ChatbotBotRecord {
  const b = JSON.parse(raw) as ChatbotBotRecord;
  return { ...b, triggerOperator: b.triggerOperator ?? undefined, triggerValue: b.triggerValue ?? undefined };
}

function toLink(raw: string): ChatbotLinkRecord {
  const l = JSON.parse(raw) as ChatbotLinkRecord;
  return {
    ...l,
    lastError: l.lastError ?? undefined,
    fallbackBotId: l.fallbackBotId ?? undefined,
    version: l.version ?? 0,
  };
}

function isUniqueViolation(err: unknown): boolean {
  const code = (err as { code?: string }).code;
  return code === 'SQLITE_CONSTRAINT_UNIQUE' || code === 'SQLITE_CONSTRAINT_PRIMARYKEY';
}

function conflict(bot: ChatbotBotRecord): ConflictError {
  return new ConflictError(
    bot.triggerType === 'all'
      ? 'An enabled bot with triggerType all already exists'
      : `A keyword bot with triggerOperator ${bot.triggerOperator} and this triggerValue already exists`,
  );
}

/** Chatbot bots and links in SQLite (migration 7); a partial unique index enforces the trigger rules. */
export class SqliteChatbots implements ChatbotRepository {
  constructor(private readonly db: Database.Database) {}

  async listBots(instanceId: string): Promise<ChatbotBotRecord[]> {
    const rows = this.db
      .prepare('SELECT bot FROM chatbot_bots WHERE instance_id = ? ORDER BY created_at, bot_id')
      .all(instanceId) as Row[];
    return rows.map((r) => toBot(r.bot));
  }

  async getBot(instanceId: string, botId: string): Promise<ChatbotBotRecord | undefined> {
    const row = this.db
      .prepare('SELECT bot FROM chatbot_bots WHERE instance_id = ? AND bot_id = ?')
      .get(instanceId, botId) as Row | undefined;
    return row ? toBot(row.bot) : undefined;
  }

  async insertBot(bot: ChatbotBotRecord): Promise<void> {
    try {
      this.db
        .prepare('INSERT INTO chatbot_bots (instance_id, bot_id, trigger_key, bot, created_at) VALUES (?, ?, ?, ?, ?)')
        .run(bot.instanceId, bot.botId, chatbotTriggerKey(bot) ?? null, JSON.stringify(bot), bot.createdAt);
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(bot);
      throw err;
    }
  }

  async updateBot(bot: ChatbotBotRecord): Promise<boolean> {
    try {
      const res = this.db
        .prepare('UPDATE chatbot_bots SET trigger_key = ?, bot = ? WHERE instance_id = ? AND bot_id = ?')
        .run(chatbotTriggerKey(bot) ?? null, JSON.stringify(bot), bot.instanceId, bot.botId);
      return res.changes === 1;
    } catch (err) {
      if (isUniqueViolation(err)) throw conflict(bot);
      throw err;
    }
  }

  async deleteBot(instanceId: string, botId: string): Promise<boolean> {
    return (
      this.db.prepare('DELETE FROM chatbot_bots WHERE instance_id = ? AND bot_id = ?').run(instanceId, botId)
        .changes === 1
    );
  }

  async deleteAllBots(instanceId: string): Promise<number> {
    return this.db.prepare('DELETE FROM chatbot_bots WHERE instance_id = ?').run(instanceId).changes;
  }

  async getLink(instanceId: string): Promise<ChatbotLinkRecord | undefined> {
    const row = this.db.prepare('SELECT link FROM chatbot_links WHERE instance_id = ?').get(instanceId) as
      { link: string } | undefined;
    return row ? toLink(row.link) : undefined;
  }

  async saveLink(link: Omit<ChatbotLinkRecord, 'version'>, expected: number | undefined): Promise<boolean> {
    const raw = JSON.stringify({ ...link, version: (expected ?? 0) + 1 });
    const res =
      expected === undefined
        ? this.db
            .prepare('INSERT INTO chatbot_links (instance_id, link) VALUES (?, ?) ON CONFLICT (instance_id) DO NOTHING')
            .run(link.instanceId, raw)
        : this.db
            .prepare(
              "UPDATE chatbot_links SET link = ? WHERE instance_id = ? AND coalesce(json_extract(link, '$.version'), 0) = ?",
            )
            .run(raw, link.instanceId, expected);
    return res.changes === 1;
  }

  async deleteLink(instanceId: string): Promise<boolean> {
    return this.db.prepare('DELETE FROM chatbot_links WHERE instance_id = ?').run(instanceId).changes === 1;
  }
}
