import type { DeliveryRepository, DeliveryRow } from '../../store/store.js';
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

/** Embedded mode: the durable queue is an outbox table in the store (SQLite or MongoDB). */
export class OutboxDeliveryQueue implements DeliveryQueue {
  constructor(private readonly repo: DeliveryRepository) {}

  async enqueue(deliveries: Delivery[]): Promise<void> {
    const now = new Date().toISOString();
    await this.repo.insert(
      deliveries.map((d) => {
        const { id, instanceId, attempts, lastError, createdAt, receipt: _r, ...payload } = d;
        return { id, instanceId, attempts, lastError, createdAt, updatedAt: now, payload: JSON.stringify(payload) };
      }),
      Date.now(),
    );
  }

  async take(max: number, leaseMs: number): Promise<Delivery[]> {
    return (await this.repo.take(Date.now(), max, leaseMs)).map(toDelivery);
  }

  async complete(d: Delivery): Promise<void> {
    await this.repo.complete(d.id);
  }

  async retry(d: Delivery, dueAt: number): Promise<void> {
    await this.repo.reschedule(d.id, dueAt, d.attempts, d.lastError ?? '');
  }

  async bury(d: Delivery): Promise<void> {
    await this.repo.bury(d.id, d.attempts, d.lastError ?? '');
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

  async close(): Promise<void> {}
}
