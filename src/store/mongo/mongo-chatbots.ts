import type { Collection, Db, Filter } from 'mongodb';
import { ConflictError } from '../../errors.js';
import { chatbotTriggerKey } from '../chatbot-trigger-key.js';
import type { ChatbotBotRecord, ChatbotLinkRecord } from '../records.js';
import type { ChatbotRepository } from '../store.js';
import type { ClientSession } from 'mongodb';
import { isDuplicateKey } from './mongo-docs.js';

/** `triggerKey` is absent (not null) for a disabled catch-all bot, so the partial unique index skips it. */
type BotDoc = Omit<ChatbotBotRecord, 'triggerOperator' | 'triggerValue'> & {
  _id: string;
  triggerOperator: string | null;
  triggerValue: string | null;
  triggerKey?: string;
};
type LinkDoc = Omit<ChatbotLinkRecord, 'instanceId' | 'lastError' | 'fallbackBotId' | 'version'> & {
  _id: string;
  lastError: string | null;
  fallbackBotId: string | null;
  version?: number;
};

const botId = (instanceId: string, id: string) => `${instanceId}\u0000${id}`;

function toDoc(bot: ChatbotBotRecord): BotDoc {
  const key = chatbotTriggerKey(bot);
  return {
    ...bot,
    _id: botId(bot.instanceId, bot.botId),
    triggerOperator: bot.triggerOperator ?? null,
    triggerValue: bot.triggerValue ?? null,
    ...(key !== undefined ? { triggerKey: key } : {}),
  };
}

function toBot(d: BotDoc): ChatbotBotRecord {
  const { _id, triggerKey: _k, ...rest } = d;
  return {
    ...rest,
    triggerOperator: (d.triggerOperator ?? undefined) as ChatbotBotRecord['triggerOperator'],
    triggerValue: d.triggerValue ?? undefined,
  };
}

function conflict(bot: ChatbotBotRecord): ConflictError {
  return new ConflictError(
    bot.triggerType === 'all'
      ? 'An enabled bot with triggerType all already exists'
      : `A keyword bot with triggerOperator ${bot.triggerOperator} and this triggerValue already exists`,
  );
}

/** Chatbot bots and links in MongoDB; a partial unique index on (instanceId, triggerKey) enforces the trigger rules. */
export class MongoChatbots implements ChatbotRepository {
  readonly #bots: Collection<BotDoc>;
  readonly #links: Collection<LinkDoc>;

  constructor(db: Db) {
    this.#bots = db.collection<BotDoc>('chatbot_bots');
    this.#links = db.collection<LinkDoc>('chatbot_links');
  }

  static async createIndexes(db: Db): Promise<void> {
    await db.collection('chatbot_bots').createIndexes([
      { key: { instanceId: 1, createdAt: 1 }, name: 'instanceId' },
      {
        key: { instanceId: 1, triggerKey: 1 },
        name: 'instanceId_triggerKey',
        unique: true,
        partialFilterExpression: { triggerKey: { $type: 'string' } },
      },
    ]);
  }

  async listBots(instanceId: string): Promise<ChatbotBotRecord[]> {
    return (await this.#bots.find({ instanceId }).sort({ createdAt: 1, botId: 1 }).toArray()).map(toBot);
  }

  async getBot(instanceId: string, id: string): Promise<ChatbotBotRecord | undefined> {
    const doc = await this.#bots.findOne({ _id: botId(instanceId, id) });
    return doc ? toBot(doc) : undefined;
  }

  async insertBot(bot: ChatbotBotRecord): Promise<void> {
    try {
      await this.#bots.insertOne(toDoc(bot));
    } catch (err) {
      if (isDuplicateKey(err)) throw conflict(bot);
      throw err;
    }
  }

  async updateBot(bot: ChatbotBotRecord): Promise<boolean> {
    try {
      const res = await this.#bots.replaceOne({ _id: botId(bot.instanceId, bot.botId) }, toDoc(bot));
      return res.matchedCount === 1;
    } catch (err) {
      if (isDuplicateKey(err)) throw conflict(bot);
      throw err;
    }
  }

  async deleteBot(instanceId: string, id: string): Promise<boolean> {
    return (await this.#bots.deleteOne({ _id: botId(instanceId, id) })).deletedCount === 1;
  }

  async deleteAllBots(instanceId: string): Promise<number> {
    return (await this.#bots.deleteMany({ instanceId })).deletedCount;
  }

  async getLink(instanceId: string): Promise<ChatbotLinkRecord | undefined> {
    const doc = await this.#links.findOne({ _id: instanceId });
    if (!doc) return undefined;
    return {
      instanceId,
      status: doc.status,
      lastError: doc.lastError ?? undefined,
      fallbackBotId: doc.fallbackBotId ?? undefined,
      updatedAt: doc.updatedAt,
      version: doc.version ?? 0,
    };
  }

  async saveLink(link: Omit<ChatbotLinkRecord, 'version'>, expected: number | undefined): Promise<boolean> {
    const doc: LinkDoc = {
      _id: link.instanceId,
      status: link.status,
      lastError: link.lastError ?? null,
      fallbackBotId: link.fallbackBotId ?? null,
      updatedAt: link.updatedAt,
      version: (expected ?? 0) + 1,
    };
    if (expected === undefined) {
      try {
        await this.#links.insertOne(doc);
        return true;
      } catch (err) {
        if (isDuplicateKey(err)) return false;
        throw err;
      }
    }
    // A link stored before versions existed has none: it counts as version 0.
    const filter: Filter<LinkDoc> =
      expected === 0
        ? { _id: link.instanceId, $or: [{ version: 0 }, { version: { $exists: false } }] }
        : { _id: link.instanceId, version: expected };
    const res = await this.#links.replaceOne(filter, doc);
    return res.matchedCount === 1;
  }

  async deleteLink(instanceId: string): Promise<boolean> {
    return (await this.#links.deleteOne({ _id: instanceId })).deletedCount === 1;
  }

  /** Everything of a deleted instance. */
  async forgetInstance(instanceId: string, session?: ClientSession): Promise<void> {
    await this.#bots.deleteMany({ instanceId }, { session });
    await this.#links.deleteOne({ _id: instanceId }, { session });
  }
}
