import type { Logger } from 'pino';
import { channels, keys } from '../redis/keys.js';
import { getMany } from '../redis/multi-slot.js';
import type { RedisClient } from '../redis/redis-client.js';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';
import type { Membership, NodeInfo } from './membership.js';
import type { Transport } from '../transport/transport.js';

export interface RedisMembershipOptions {
  nodeId: string;
  url: () => string;
  actors: () => number;
  /** @default 1000 */
  heartbeatMs: number;
  /** A node silent this long is gone. @default 3000 */
  timeoutMs: number;
  /** The heartbeat and the early looks run on it. @default systemClock */
  clock?: Clock;
}

/** After a record's expected expiry: Redis expires a key within a millisecond or so of its TTL. */
const EXPIRY_MARGIN_MS = 5;
/** A record still there this long past its expected expiry (a slow SET, skew) is looked at again after RELOOK_MS. */
const LATE_MS = 100;
const RELOOK_MS = 20;
/** Early looks allowed between two heartbeats, whatever the clocks say: the cost stays bounded. */
const EARLY_LOOKS_PER_BEAT = 3;

/**
 * Membership in Redis: each node's record is a key whose TTL is the timeout, renewed by the heartbeat,
 * so Redis itself decides who is silent (no wall clocks compared across hosts). A sorted set lists the
 * ids to look at. A leaving node deletes its key and says so on the cluster channel.
 */
export class RedisMembership implements Membership {
  #live: NodeInfo[] = [];
  #timer: Cancel | undefined;
  /** A look scheduled for when a silent node's record should expire, before the next heartbeat. */
  #early: { at: number; cancel: Cancel } | undefined;
  #earlyLooks = 0;
  #listeners: ((nodes: NodeInfo[]) => void)[] = [];
  #unsubscribe: (() => Promise<void>) | undefined;
  #stopped = false;
  readonly #startedAt = new Date().toISOString();
  readonly #clock: Clock;

  constructor(
    private readonly redis: RedisClient,
    private readonly transport: Transport,
    private readonly options: RedisMembershipOptions,
    private readonly logger: Logger,
  ) {
    this.#clock = options.clock ?? systemClock;
  }

  async start(): Promise<void> {
    this.#unsubscribe = await this.transport.subscribe(channels.cluster(), (raw) => {
      const msg = JSON.parse(raw) as { t: string; nodeId: string };
      if (msg.t === 'leaving' && msg.nodeId !== this.options.nodeId) {
        this.#set(this.#live.filter((n) => n.nodeId !== msg.nodeId));
      }
    });
    await this.#beat();
    this.#timer = this.#clock.every(this.options.heartbeatMs, () => {
      this.#beat().catch((err: unknown) => this.logger.warn({ err }, 'heartbeat failed'));
    });
  }

  async #beat(): Promise<void> {
    if (this.#stopped) return;
    this.#earlyLooks = 0;
    const info: NodeInfo = {
      nodeId: this.options.nodeId,
      url: this.options.url(),
      startedAt: this.#startedAt,
      actors: this.options.actors(),
      heartbeatAt: new Date().toISOString(),
    };
    // Two slots on a Redis Cluster, so no MULTI: a listed id without its record is dropped by refresh().
    await Promise.all([
      this.redis.set(keys.node(this.options.nodeId), JSON.stringify(info), 'PX', this.options.timeoutMs),
      this.redis.zadd(keys.nodes(), 0, this.options.nodeId),
    ]);
    await this.refresh();
  }

  async refresh(): Promise<NodeInfo[]> {
    const ids = await this.redis.zrange(keys.nodes(), 0, -1);
    const records = await getMany(
      this.redis,
      ids.map((id) => keys.node(id)),
    );
    const gone = ids.filter((_, i) => records[i] === null);
    if (gone.length) await this.redis.zrem(keys.nodes(), ...gone);
    const live = records
      .flatMap((r) => (r ? [JSON.parse(r) as NodeInfo] : []))
      .sort((a, b) => a.nodeId.localeCompare(b.nodeId));
    this.#set(live);
    this.#lookWhenDue(live);
    return live;
  }

  /**
   * A node that stopped beating is dropped when its record expires, not up to a heartbeat later: a dead
   * node's instances are claimed once both its record and its lease are gone, and the record's expiry
   * falls within the lease's last second. Its writer's wall clock (`heartbeatAt`) only times the look;
   * Redis still decides, and a skewed clock costs at most EARLY_LOOKS_PER_BEAT needless looks per heartbeat.
   */
  #lookWhenDue(live: NodeInfo[]): void {
    const wallNow = Date.now();
    let dueIn = Infinity;
    for (const n of live) {
      if (n.nodeId === this.options.nodeId) continue;
      const ms = Date.parse(n.heartbeatAt) + this.options.timeoutMs - wallNow + EXPIRY_MARGIN_MS;
      if (ms > -LATE_MS && ms < this.options.heartbeatMs) dueIn = Math.min(dueIn, ms > 0 ? ms : RELOOK_MS);
    }
    if (dueIn === Infinity || this.#stopped || this.#earlyLooks >= EARLY_LOOKS_PER_BEAT) return;
    const at = this.#clock.now() + dueIn;
    if (this.#early && this.#early.at <= at) return;
    this.#early?.cancel();
    this.#early = {
      at,
      cancel: this.#clock.after(dueIn, () => {
        this.#early = undefined;
        this.#earlyLooks++;
        this.refresh().catch((err: unknown) => this.logger.debug({ err }, 'membership look failed'));
      }),
    };
  }

  #set(live: NodeInfo[]): void {
    const before = this.#live.map((n) => n.nodeId).join(',');
    this.#live = live;
    if (live.map((n) => n.nodeId).join(',') !== before) for (const l of this.#listeners) l(live);
  }

  liveNodes(): NodeInfo[] {
    return this.#live;
  }

  onChange(listener: (nodes: NodeInfo[]) => void): void {
    this.#listeners.push(listener);
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#timer?.();
    this.#early?.cancel();
    try {
      await Promise.all([
        this.redis.del(keys.node(this.options.nodeId)),
        this.redis.zrem(keys.nodes(), this.options.nodeId),
      ]);
      await this.transport.publish(channels.cluster(), JSON.stringify({ t: 'leaving', nodeId: this.options.nodeId }));
    } catch (err) {
      this.logger.warn({ err }, 'could not announce departure; peers will notice the silence');
    }
    await this.#unsubscribe?.();
  }
}
