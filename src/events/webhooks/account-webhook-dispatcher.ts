import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/store.js';
import type { EnterpriseEnvelope } from '../enterprise-events.js';
import type { DeadLetter, DeliveryQueue } from './delivery.js';

/** The queue's per-owner key of an account's deliveries, apart from every instance id. */
const queueKey = (accountId: string): string => `account:${accountId}`;

export interface AccountEvent {
  accountId: string;
  event: string;
  description: string;
  data: Record<string, unknown>;
  /**
   * The delivery's id, when the producer may queue the same event again (after a crash): the queue keeps
   * one delivery per id, and receivers deduplicate on it. A new one otherwise.
   */
  id?: string;
  /** When the event happened (ISO 8601), so that a delivery queued again carries the same body. Now otherwise. */
  timestamp?: string;
}

/**
 * Turns an account's Enterprise event into one signed delivery on the shared DeliveryQueue, when the
 * account's webhook is enabled and lists the event (`force`: the test event goes out regardless).
 * Dead letters are kept under `account:<id>`.
 */
export class AccountWebhookDispatcher {
  #onEnqueue: () => void = () => undefined;

  constructor(
    private readonly store: Store,
    private readonly queue: DeliveryQueue,
  ) {}

  /** Called after each enqueue (the node wakes its worker). */
  onEnqueue(listener: () => void): void {
    this.#onEnqueue = listener;
  }

  /** The account's deliveries given up on, newest first. */
  deadLetters(accountId: string): Promise<DeadLetter[]> {
    return this.queue.deadLetters(queueKey(accountId));
  }

  /** Queues the given dead letters (all when `ids` is omitted) again; the count queued. */
  async redeliver(accountId: string, ids?: string[]): Promise<number> {
    const count = await this.queue.redeliver(queueKey(accountId), ids);
    if (count > 0) this.#onEnqueue();
    return count;
  }

  /** True when a delivery was queued. */
  async dispatch(e: AccountEvent, options: { force?: boolean } = {}): Promise<boolean> {
    const webhook = await this.store.accountWebhooks.get(e.accountId);
    if (!webhook?.url) return false;
    if (!options.force && (!webhook.enabled || !webhook.events.includes(e.event))) return false;
    const account = await this.store.accounts.findById(e.accountId);
    if (!account) return false;
    const envelope: EnterpriseEnvelope = {
      event: e.event,
      account: account.name,
      description: e.description,
      data: e.data,
      timestamp: e.timestamp ?? new Date().toISOString(),
    };
    await this.queue.enqueue([
      {
        id: e.id ?? randomUUID(),
        instanceId: queueKey(e.accountId),
        label: 'account',
        event: e.event,
        url: webhook.url,
        authorizationSealed: undefined,
        signAccountId: e.accountId,
        body: JSON.stringify(envelope),
        attempts: 0,
        createdAt: envelope.timestamp,
      },
    ]);
    this.#onEnqueue();
    return true;
  }
}
