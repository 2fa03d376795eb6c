import { UnavailableError } from '../../errors.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { keys } from '../../redis/keys.js';
import { runScript } from '../../redis/scripts.js';
import type { DeadLetter, Delivery, DeliveryQueue } from './delivery.js';

const GROUP = 'webhooks';
/** Keep the stream bounded even if every node stops consuming for a long time. */
const STREAM_MAX = 1_000_000;
const DEAD_MAX = 1000;

type StreamReply = [string, [string, string[]][]][] | null;

/** What a client asked of the queue while Redis is away: 503, like every route that needs Redis. */
async function unavailableWithoutRedis<T>(work: Promise<T>): Promise<T> {
  try {
    return await work;
  } catch (err) {
    throw new UnavailableError('Webhook queue unavailable (Redis); try again later', { cause: err });
  }
}

/**
 * Webhook deliveries in a Redis Stream read by one consumer group across all nodes: each node takes new
 * entries (XREADGROUP) and entries another node took but never settled within the lease (XAUTOCLAIM:
 * that node died). Settling is one script each: complete (XACK+XDEL), retry (into a sorted set by due
 * time, moved back by `promoteDue`), or bury (into the instance's dead-letter list). Durable as far as
 * Redis is: run it with AOF (see docs/operations).
 */
export class RedisDeliveryQueue implements DeliveryQueue {
  #groupReady = false;

  constructor(
    private readonly redis: Redis,
    private readonly consumer: string,
    private readonly log: Logger,
  ) {}

  async #ensureGroup(): Promise<void> {
    if (this.#groupReady) return;
    try {
      await this.redis.xgroup('CREATE', keys.webhookStream(), GROUP, '0', 'MKSTREAM');
    } catch (err) {
      if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
    }
    this.#groupReady = true;
  }

  async enqueue(deliveries: Delivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const pipeline = this.redis.pipeline();
    for (const d of deliveries) {
      pipeline.xadd(keys.webhookStream(), 'MAXLEN', '~', STREAM_MAX, '*', 'd', JSON.stringify(d));
    }
    const results = await pipeline.exec();
    const failed = results?.find(([err]) => err);
    if (failed) throw failed[0]!;
  }

  async take(max: number, leaseMs: number): Promise<Delivery[]> {
    try {
      return await this.#take(max, leaseMs);
    } catch (err) {
      // After a Redis restart without persistence the group is gone: create it again.
      if (String((err as Error).message).includes('NOGROUP')) {
        this.#groupReady = false;
        return this.#take(max, leaseMs);
      }
      throw err;
    }
  }

  async #take(max: number, leaseMs: number): Promise<Delivery[]> {
    await this.#ensureGroup();
    await runScript<number>(this.redis, 'promoteDue', [keys.webhookRetries(), keys.webhookStream()], [Date.now(), max]);
    const claimed = (await this.redis.xautoclaim(
      keys.webhookStream(),
      GROUP,
      this.consumer,
      leaseMs,
      '0-0',
      'COUNT',
      max,
    )) as [string, [string, string[]][]];
    const entries = [...(claimed[1] ?? [])];
    if (entries.length < max) {
      const fresh = (await this.redis.xreadgroup(
        'GROUP',
        GROUP,
        this.consumer,
        'COUNT',
        max - entries.length,
        'STREAMS',
        keys.webhookStream(),
        '>',
      )) as StreamReply;
      for (const [, list] of fresh ?? []) entries.push(...list);
    }
    return entries.flatMap(([entryId, fields]) => {
      const raw = fields[fields.indexOf('d') + 1];
      if (!raw) return [];
      try {
        return [{ ...(JSON.parse(raw) as Delivery), receipt: entryId }];
      } catch (err) {
        this.log.error({ err, entryId }, 'dropping a malformed delivery entry');
        return [];
      }
    });
  }

  async complete(d: Delivery): Promise<void> {
    await runScript(this.redis, 'ackDelivery', [keys.webhookStream()], [GROUP, d.receipt!]);
  }

  async retry(d: Delivery, dueAt: number): Promise<void> {
    const { receipt, ...rest } = d;
    await runScript(
      this.redis,
      'retryDelivery',
      [keys.webhookStream(), keys.webhookRetries()],
      [GROUP, receipt!, dueAt, JSON.stringify(rest)],
    );
  }

  async bury(d: Delivery): Promise<void> {
    const { receipt, ...rest } = d;
    const letter: DeadLetter = { ...rest, failedAt: new Date().toISOString() };
    await runScript(
      this.redis,
      'buryDelivery',
      [keys.webhookStream(), keys.webhookDead(d.instanceId)],
      [GROUP, receipt!, JSON.stringify(letter), DEAD_MAX],
    );
  }

  async deadLetters(instanceId: string): Promise<DeadLetter[]> {
    const raw = await unavailableWithoutRedis(this.redis.lrange(keys.webhookDead(instanceId), 0, -1));
    return raw.map((r) => JSON.parse(r) as DeadLetter).reverse();
  }

  async redeliver(instanceId: string, ids?: string[]): Promise<number> {
    return unavailableWithoutRedis(
      runScript<number>(
        this.redis,
        'reviveDead',
        [keys.webhookDead(instanceId), keys.webhookStream()],
        [ids ? JSON.stringify(ids) : '*'],
      ),
    );
  }

  async depth(): Promise<number> {
    const [len, retries] = await Promise.all([
      this.redis.xlen(keys.webhookStream()),
      this.redis.zcard(keys.webhookRetries()),
    ]);
    return len + retries;
  }

  async close(): Promise<void> {}
}
