import { UnavailableError } from '../../errors.js';
import type { Redis } from 'ioredis';
import type { Logger } from 'pino';
import { keys } from '../../redis/keys.js';
import { runScript } from '../../redis/scripts.js';
import { TickBatcher } from '../../util/tick-batcher.js';
import type { DeadLetter, Delivery, DeliveryQueue } from './delivery.js';

const GROUP = 'webhooks';
/** Keep the stream bounded even if every node stops consuming for a long time. */
const STREAM_MAX = 1_000_000;
const DEAD_MAX = 1000;
/** Entry ids per ackDeliveries call: Lua's `unpack` has a bounded stack. */
const ACK_CHUNK = 500;
/** The longest wait between two looks for deliveries whose taker died (their lease is far longer). */
const RECLAIM_EVERY_MS = 1000;

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
 * that node died; looked for about once a second). The enqueues of one event-loop turn go out as one
 * pipeline, its completions as one script call (XACK+XDEL of the batch). A retry (into a sorted set by due
 * time, moved back by `promoteDue`) or a burial (into the instance's dead-letter list) is one script each.
 * Durable as far as Redis is: run it with AOF (see docs/operations).
 */
export class RedisDeliveryQueue implements DeliveryQueue {
  #groupReady = false;
  /** When to look again for deliveries another node took and never settled (XAUTOCLAIM). */
  #reclaimAt = 0;
  /** The enqueues of one event-loop turn, sent as one pipeline. */
  readonly #adds = new TickBatcher<Delivery[]>((groups) => this.#xadd(groups));
  /** The completions of one event-loop turn, acknowledged by one script call. */
  readonly #acks = new TickBatcher<string>((receipts) => this.#ack(receipts));

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
    await this.#adds.add(deliveries);
  }

  /** One pipeline for every group; a group fails if any of its entries was refused. */
  async #xadd(groups: Delivery[][]): Promise<unknown[]> {
    const pipeline = this.redis.pipeline();
    for (const group of groups) {
      for (const d of group) {
        pipeline.xadd(keys.webhookStream(), 'MAXLEN', '~', STREAM_MAX, '*', 'd', JSON.stringify(d));
      }
    }
    const results = (await pipeline.exec()) ?? [];
    let next = 0;
    return groups.map((group) => {
      const own = results.slice(next, (next += group.length));
      return own.length < group.length ? new Error('the pipeline was not run') : own.find(([err]) => err)?.[0];
    });
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
    const entries: [string, string[]][] = [];
    if (Date.now() >= this.#reclaimAt) {
      const claimed = (await this.redis.xautoclaim(
        keys.webhookStream(),
        GROUP,
        this.consumer,
        leaseMs,
        '0-0',
        'COUNT',
        max,
      )) as [string, [string, string[]][]];
      entries.push(...(claimed[1] ?? []));
      // A full claim may have left more behind: look again at the next take.
      this.#reclaimAt = entries.length < max ? Date.now() + Math.min(RECLAIM_EVERY_MS, leaseMs / 4) : 0;
    }
    const room = max - entries.length;
    // Sent together (one round trip); Redis runs them in order, so the read sees the retries just due.
    const [promoted, fresh] = await Promise.allSettled([
      runScript<number>(this.redis, 'promoteDue', [keys.webhookRetries(), keys.webhookStream()], [Date.now(), max]),
      room > 0
        ? (this.redis.xreadgroup(
            'GROUP',
            GROUP,
            this.consumer,
            'COUNT',
            room,
            'STREAMS',
            keys.webhookStream(),
            '>',
          ) as Promise<StreamReply>)
        : null,
    ]);
    if (promoted.status === 'rejected') this.log.warn({ err: promoted.reason }, 'could not promote due retries');
    // Entries already claimed are ours now: handing them out beats leaving them until their lease ends.
    if (fresh.status === 'rejected' && entries.length === 0) throw fresh.reason;
    if (fresh.status === 'fulfilled') for (const [, list] of fresh.value ?? []) entries.push(...list);
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

  complete(d: Delivery): Promise<void> {
    return this.#acks.add(d.receipt!);
  }

  async #ack(receipts: string[]): Promise<void> {
    const calls: Promise<number>[] = [];
    for (let i = 0; i < receipts.length; i += ACK_CHUNK) {
      const chunk = receipts.slice(i, i + ACK_CHUNK);
      calls.push(runScript<number>(this.redis, 'ackDeliveries', [keys.webhookStream()], [GROUP, ...chunk]));
    }
    await Promise.all(calls);
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

  async close(): Promise<void> {
    await Promise.all([this.#adds.drain(), this.#acks.drain()]);
  }
}
