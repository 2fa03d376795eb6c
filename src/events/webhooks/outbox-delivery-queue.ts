import { StoreUnavailableError } from '../../errors.js';
import type { DeliveryRepository, DeliveryRow, DeliverySettlement, EmissionClaim } from '../../store/store.js';
import { TickBatcher } from '../../util/tick-batcher.js';
import type { DeadLetter, Delivery, DeliveryQueue } from './delivery.js';

type Payload = Omit<Delivery, 'id' | 'instanceId' | 'attempts' | 'lastError' | 'createdAt' | 'receipt'>;

function toDelivery(row: DeliveryRow): Delivery {
  const payload = JSON.parse(row.payload) as Payload;
  return {
    ...payload,
    id: row.id,
    instanceId: row.instanceId,
    attempts: row.attempts,
    createdAt: row.createdAt,
    ...(row.lastError ? { lastError: row.lastError } : {}),
  };
}

function toRows(deliveries: Delivery[]): DeliveryRow[] {
  const now = new Date().toISOString();
  return deliveries.map((d) => {
    const { id, instanceId, attempts, lastError, createdAt, receipt: _r, ...payload } = d;
    return { id, instanceId, attempts, lastError, createdAt, updatedAt: now, payload: JSON.stringify(payload) };
  });
}

/** A store that is out of reach fails every write alike: writing a batch's members one by one would not help. */
const retryAlone = (err: unknown) => !(err instanceof StoreUnavailableError);

/**
 * Embedded mode: the durable queue is an outbox table in the store (SQLite or MongoDB). The writes of one
 * event-loop turn are made together: every enqueue in one insert, every settlement in one more, each one
 * transaction in SQLite. An enqueue resolves only once its rows are committed, as when it wrote alone.
 */
export class OutboxDeliveryQueue implements DeliveryQueue {
  readonly #inserts: TickBatcher<DeliveryRow[]>;
  readonly #settlements: TickBatcher<DeliverySettlement>;

  constructor(private readonly repo: DeliveryRepository) {
    this.#inserts = new TickBatcher((groups) => this.repo.insert(groups.flat(), Date.now()), { retryAlone });
    this.#settlements = new TickBatcher((settlements) => this.repo.settle(settlements), { retryAlone });
  }

  async enqueue(deliveries: Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    await this.#inserts.add(toRows(deliveries));
  }

  // Its own transaction, not batched: the claim is decided there (see DeliveryRepository.insertOnce).
  enqueueOnce(deliveries: Delivery[], claim: EmissionClaim): Promise<boolean> {
    return this.repo.insertOnce(toRows(deliveries), Date.now(), claim);
  }

  async take(max: number, leaseMs: number): Promise<Delivery[]> {
    return (await this.repo.take(Date.now(), max, leaseMs)).map(toDelivery);
  }

  complete(d: Delivery): Promise<void> {
    return this.#settlements.add({ id: d.id, outcome: 'completed' });
  }

  retry(d: Delivery, dueAt: number): Promise<void> {
    return this.#settlements.add({
      id: d.id,
      outcome: 'rescheduled',
      dueAt,
      attempts: d.attempts,
      lastError: d.lastError ?? '',
    });
  }

  bury(d: Delivery): Promise<void> {
    return this.#settlements.add({ id: d.id, outcome: 'buried', attempts: d.attempts, lastError: d.lastError ?? '' });
  }

  async deadLetters(instanceId: string): Promise<DeadLetter[]> {
    return (await this.repo.listDead(instanceId)).map((row) => ({ ...toDelivery(row), failedAt: row.updatedAt }));
  }

  redeliver(instanceId: string, ids?: string[]): Promise<number> {
    return this.repo.revive(instanceId, ids, Date.now());
  }

  depth(): Promise<number> {
    return this.repo.countPending();
  }

  async close(): Promise<void> {
    await Promise.all([this.#inserts.drain(), this.#settlements.drain()]);
  }
}
