import type { Collection, Db, Filter } from 'mongodb';
import { MESSAGE_STATUS_RANK } from '../records.js';
import type { ChatCursor, ChatSummary, HistoryCursor, MessageRecord, MessageStatus } from '../records.js';
import type { MessageRepository } from '../store.js';
import type { ClientSession } from 'mongodb';

type MessageDoc = Omit<MessageRecord, 'media' | 'status' | 'source' | 'emittedAt'> & {
  _id: string;
  media: MessageRecord['media'] | null;
  status?: MessageStatus | null;
  source?: string | null;
  emittedAt?: number | null;
  /** The message owed to the extensions (JSON), see DeliveryRepository.insertOnce. */
  owed?: string | null;
};

/** A message's `_id`: its instance and its id (ids are unique per instance only). */
export const messageDocId = (instanceId: string, id: string): string => `${instanceId}\u0000${id}`;

function toMessage(d: MessageDoc): MessageRecord {
  const { _id, media, ...fields } = d;
  // BSON keeps absent optional fields as null; records use undefined.
  const cleanMedia = media
    ? (Object.fromEntries(Object.entries(media).filter(([, v]) => v !== null)) as MessageRecord['media'])
    : undefined;
  const { status, source, emittedAt, owed: _owed, ...rest } = fields;
  return {
    ...rest,
    media: cleanMedia,
    ...(status ? { status } : {}),
    ...(source ? { source } : {}),
    ...(emittedAt != null ? { emittedAt } : {}),
  };
}

/** The chat history in MongoDB (collection `messages`), one document per (instance, message id). */
export class MongoMessages implements MessageRepository {
  readonly #col: Collection<MessageDoc>;

  constructor(db: Db) {
    this.#col = db.collection<MessageDoc>('messages');
  }

  static async createIndexes(db: Db): Promise<void> {
    await db.collection('messages').createIndexes([
      { key: { instanceId: 1, chatJid: 1, timestamp: -1, id: -1 }, name: 'instance_chat_time' },
      { key: { instanceId: 1, timestamp: -1, id: -1 }, name: 'instance_time' },
      { key: { timestamp: 1 }, name: 'time' },
      { key: { instanceId: 1 }, name: 'instance_owed', partialFilterExpression: { owed: { $type: 'string' } } },
    ]);
  }

  async save(m: MessageRecord): Promise<void> {
    const _id = messageDocId(m.instanceId, m.id);
    // `emittedAt` is only ever set by DeliveryRepository.insertOnce: a later save (an edit, our send's echo) keeps it.
    const { status, source, emittedAt: _emitted, ...fields } = m;
    // A status recorded earlier (a receipt) is kept; a new message takes the one it came with. A label is
    // kept by later saves that carry none (the network's echo of our own send).
    await this.#col.updateOne(
      { _id },
      {
        $set: { ...fields, media: m.media ?? null, ...(source !== undefined ? { source } : {}) },
        $setOnInsert: { status: status ?? null },
      },
      { upsert: true },
    );
  }

  async owed(instanceId: string, limit: number): Promise<{ id: string; owed: string }[]> {
    const docs = await this.#col
      .find({ instanceId, owed: { $type: 'string' } }, { projection: { id: 1, owed: 1 } })
      .sort({ timestamp: 1, id: 1 })
      .limit(limit)
      .toArray();
    return docs.map((d) => ({ id: d.id, owed: d.owed! }));
  }

  async isOwed(instanceId: string, id: string): Promise<boolean> {
    return (await this.#col.countDocuments({ _id: messageDocId(instanceId, id), owed: { $type: 'string' } })) > 0;
  }

  async settleOwed(instanceId: string, id: string): Promise<boolean> {
    const res = await this.#col.updateOne(
      { _id: messageDocId(instanceId, id), owed: { $type: 'string' } },
      { $set: { owed: null } },
    );
    return res.modifiedCount === 1;
  }

  async setStatus(instanceId: string, ids: string[], status: MessageStatus): Promise<void> {
    // Only lower ranks (or none) are replaced, so a late "delivered" never undoes a "read".
    const lower = (Object.keys(MESSAGE_STATUS_RANK) as MessageStatus[]).filter(
      (s) => MESSAGE_STATUS_RANK[s] < MESSAGE_STATUS_RANK[status],
    );
    await this.#col.updateMany(
      { _id: { $in: ids.map((id) => messageDocId(instanceId, id)) }, status: { $in: [...lower, null] } },
      { $set: { status } },
    );
  }

  async find(instanceId: string, id: string): Promise<MessageRecord | undefined> {
    const doc = await this.#col.findOne({ _id: messageDocId(instanceId, id) });
    return doc ? toMessage(doc) : undefined;
  }

  async list(
    instanceId: string,
    q: { chatJid?: string; before?: HistoryCursor; limit: number },
  ): Promise<MessageRecord[]> {
    const filter: Filter<MessageDoc> = { instanceId };
    if (q.chatJid !== undefined) filter.chatJid = q.chatJid;
    if (q.before?.id !== undefined) {
      filter.$or = [
        { timestamp: { $lt: q.before.timestamp } },
        { timestamp: q.before.timestamp, id: { $lt: q.before.id } },
      ];
    } else if (q.before) {
      filter.timestamp = { $lt: q.before.timestamp };
    }
    const docs = await this.#col.find(filter).sort({ timestamp: -1, id: -1 }).limit(q.limit).toArray();
    return docs.map(toMessage);
  }

  async clearChat(instanceId: string, chatJid: string): Promise<number> {
    return (await this.#col.deleteMany({ instanceId, chatJid })).deletedCount;
  }

  async chats(instanceId: string, q: { before?: ChatCursor; limit: number }): Promise<ChatSummary[]> {
    const after = q.before
      ? [
          {
            $match: {
              $or: [
                { last: { $lt: q.before.lastMessageAt } },
                { last: q.before.lastMessageAt, _id: { $lt: q.before.chatJid } },
              ],
            },
          },
        ]
      : [];
    const rows = await this.#col
      .aggregate<{ _id: string; last: number; unread: number }>([
        { $match: { instanceId } },
        {
          $group: {
            _id: '$chatJid',
            last: { $max: '$timestamp' },
            unread: {
              $sum: { $cond: [{ $and: [{ $eq: ['$fromMe', false] }, { $eq: ['$status', 'received'] }] }, 1, 0] },
            },
          },
        },
        ...after,
        { $sort: { last: -1, _id: -1 } },
        { $limit: q.limit },
      ])
      .toArray();
    return rows.map((r) => ({ chatJid: r._id, lastMessageAt: r.last, unread: r.unread }));
  }

  async delete(instanceId: string, id: string): Promise<boolean> {
    return (await this.#col.deleteOne({ _id: messageDocId(instanceId, id) })).deletedCount === 1;
  }

  /** Everything of a deleted instance. */
  async forgetInstance(instanceId: string, session?: ClientSession): Promise<void> {
    await this.#col.deleteMany({ instanceId }, { session });
  }

  async prune(before: number): Promise<number> {
    return (await this.#col.deleteMany({ timestamp: { $lt: before } })).deletedCount;
  }
}
