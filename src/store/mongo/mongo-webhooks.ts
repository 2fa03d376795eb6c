import type { Collection, Filter, MongoClient, UpdateFilter } from 'mongodb';
import type { WebhookRecord } from '../records.js';
import type { WebhookRepository } from '../store.js';

import type { WebhookDoc } from './mongo-docs.js';
import { inTransaction } from './mongo-transaction.js';

export function toWebhook(d: WebhookDoc): WebhookRecord {
  return {
    instanceId: d.instanceId,
    label: d.label,
    enabled: d.enabled,
    url: d.url,
    authorizationSealed: d.authorizationSealed ?? undefined,
    byEvents: d.byEvents,
    events: d.events,
    base64: d.base64,
    ...(d.secretSealed ? { secretSealed: d.secretSealed } : {}),
    ...(d.previousSecretSealed && d.previousSecretUntil
      ? { previousSecretSealed: d.previousSecretSealed, previousSecretUntil: d.previousSecretUntil }
      : {}),
    createdAt: d.createdAt,
    updatedAt: d.updatedAt,
  };
}

export const webhookId = (instanceId: string, label: string): string => `${instanceId}\u0000${label}`;

/** Upsert that keeps the `createdAt` of an existing webhook, like the SQLite ON CONFLICT clause. */
export function webhookUpsert(w: WebhookRecord): { filter: Filter<WebhookDoc>; update: UpdateFilter<WebhookDoc> } {
  const { createdAt, ...fields } = w;
  return {
    filter: { _id: webhookId(w.instanceId, w.label) },
    update: {
      $set: {
        ...fields,
        authorizationSealed: w.authorizationSealed ?? null,
        secretSealed: w.secretSealed ?? null,
        previousSecretSealed: w.previousSecretSealed ?? null,
        previousSecretUntil: w.previousSecretUntil ?? null,
      },
      $setOnInsert: { createdAt },
    },
  };
}

export class MongoWebhooks implements WebhookRepository {
  constructor(
    private readonly client: MongoClient,
    private readonly col: Collection<WebhookDoc>,
  ) {}

  async upsert(w: WebhookRecord, limits?: { maxEnabled: number }): Promise<boolean> {
    const { filter, update } = webhookUpsert(w);
    if (!limits || !w.enabled) {
      await this.col.updateOne(filter, update, { upsert: true });
      return true;
    }
    // The count and the write in one transaction, as SQLite's BEGIN IMMEDIATE makes them.
    return inTransaction(this.client, async (session) => {
      const others = await this.col.countDocuments(
        { instanceId: w.instanceId, label: { $ne: w.label }, enabled: true },
        { session },
      );
      if (others >= limits.maxEnabled) return false;
      await this.col.updateOne(filter, update, { upsert: true, session });
      return true;
    });
  }

  async list(instanceId: string): Promise<WebhookRecord[]> {
    const docs = await this.col.find({ instanceId }).sort({ createdAt: 1, label: 1 }).toArray();
    return docs.map(toWebhook);
  }

  async delete(instanceId: string, label: string): Promise<boolean> {
    const res = await this.col.deleteOne({ _id: webhookId(instanceId, label) });
    return res.deletedCount === 1;
  }
}

/**
 * Standalone MongoDB has no multi-document transactions, so a write is fenced twice: every document
 * carries the epoch that wrote it and only a writer at or above that epoch may change it, and the owner
 * epoch is checked before and after the batch. A stale writer can thus only touch documents the new
 * owner has not written yet, and learns it is fenced right after. A batch that fails for another
 * reason (network, server) may be partly applied; `ordered` keeps it a prefix of the ops.
 */
