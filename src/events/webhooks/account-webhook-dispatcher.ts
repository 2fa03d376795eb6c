import { randomUUID } from 'node:crypto';
import type { Store } from '../../store/store.js';
import type { EnterpriseEnvelope } from '../enterprise-events.js';
import type { DeliveryQueue } from './delivery.js';

export interface AccountEvent {
  accountId: string;
  event: string;
  description: string;
  data: Record<string, unknown>;
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

  /** True when a delivery was queued. */
  async dispatch(e: AccountEvent, options: { force?: boolean } = {}): Promise<boolean> {
    const webhook = await this.store.accountWebhooks.get(e.accountId);
    if (!webhook?.url) return false;
    if (!options.force && (!webhook.enabled || !webhook.events.includes(e.event))) return false;
    const account = await this.store.accounts.findById(e.accountId);
    if (!account) return false;
    const envelope: EnterpriseEnvelope = { event: e.event, account: account.name, description: e.description, data: e.data, timestamp: new Date().toISOString() };
    await this.queue.enqueue([
      {
        id: randomUUID(),
        instanceId: `account:${e.accountId}`,
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
