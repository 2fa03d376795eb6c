import type { RedisClient } from '../redis/redis-client.js';
import { keys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import type { RateLimiter, RateLimitResult } from './rate-limiter.js';

export interface RedisRateLimiterOptions {
  /** How often counted-but-unsent requests are added to Redis; 0: every request is counted there first. */
  batchMs?: number;
  /** How many nodes this node sees now (each gets an equal share of a bucket's local allowance). */
  nodes?: () => number;
  now?: () => number;
}

/** How long closing waits for the last round of counts to reach Redis. */
const CLOSE_FLUSH_MS = 1000;
/** How many rounds old what Redis last said may be for a node to still answer from it. */
const FRESH_ROUNDS = 2;

/** What this node knows of one bucket in the current window. */
interface Bucket {
  /** The shared count Redis last answered (every node's requests sent so far). */
  known: number;
  /** When Redis last answered it: older than two rounds, it may miss a peer's counts, so it is asked again. */
  learnedAtMs: number;
  /** Requests this node answered on its own and has not sent to Redis yet. */
  pending: number;
  /** The window's end, from Redis's TTL. */
  resetAtMs: number;
}

/**
 * One fixed-window bucket per token across all nodes (spec: every user of a token shares it).
 *
 * With `batchMs` > 0 a node answers a request from its own count while the bucket is far from its limit
 * and sends its counts to Redis in one round per `batchMs`, instead of a round trip per request. Its local
 * allowance between two rounds is `(limit − known) / (2 × nodes)`: far from the limit most requests never
 * wait for Redis; near it (and for a bucket's first request in a window on this node) every request is
 * counted in Redis before it is answered. The node count is the most this node saw within the window, so a
 * peer missing from its view for a moment does not widen the allowance. A node answers on its own only
 * while what Redis last told it is at most two rounds old: with steady traffic it hears back every round,
 * and after a quiet spell its first request is counted in Redis. Error bound: the requests answered
 * locally within one round on every node together are at most half of what the bucket had left, so a
 * burst can pass the limit by at most half of it within one `batchMs`, and a steady client is limited
 * exactly; `X-RateLimit-Remaining` may miss the other nodes' requests of the last two rounds.
 */
export class RedisRateLimiter implements RateLimiter {
  readonly #buckets = new Map<string, Bucket>();
  readonly #batchMs: number;
  /** `FRESH_ROUNDS` rounds: past this since Redis last answered, a bucket's next request goes to Redis. */
  readonly #freshMs: number;
  readonly #nodes: () => number;
  readonly #now: () => number;
  /** The most nodes seen within the last window, and when that many were last seen. */
  readonly #sharers = { nodes: 1, seenAtMs: 0 };
  #flushTimer: NodeJS.Timeout | undefined;
  #closed = false;
  readonly #sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly redis: RedisClient,
    options: RedisRateLimiterOptions = {},
  ) {
    this.#batchMs = options.batchMs ?? 0;
    this.#freshMs = FRESH_ROUNDS * this.#batchMs;
    this.#nodes = options.nodes ?? (() => 1);
    this.#now = options.now ?? Date.now;
    // Forget ended windows, so that a flood of distinct (say, invalid) tokens cannot grow memory forever.
    if (this.#batchMs > 0) this.#sweeper = setInterval(() => this.#sweep(), 30_000).unref();
  }

  hit(bucket: string, limit: number, windowMs: number): RateLimitResult | Promise<RateLimitResult> {
    if (this.#batchMs === 0) return this.#counted(bucket, limit, windowMs, 1);
    const now = this.#now();
    const sharers = this.#sharing(now, windowMs);
    let b = this.#buckets.get(bucket);
    if (b !== undefined && b.resetAtMs <= now) {
      // Requests still unsent belong to the window that ended: they no longer count.
      this.#buckets.delete(bucket);
      b = undefined;
    }
    if (
      b !== undefined &&
      now - b.learnedAtMs <= this.#freshMs &&
      b.pending < Math.floor((limit - b.known) / (2 * sharers))
    ) {
      b.pending++;
      this.#scheduleFlush();
      return verdict(b.known + b.pending, limit, b.resetAtMs);
    }
    // This request, with what is pending, counted in Redis before the answer.
    const increment = 1 + (b?.pending ?? 0);
    if (b !== undefined) b.pending = 0;
    return this.#counted(bucket, limit, windowMs, increment).catch((err: unknown) => {
      const again = this.#buckets.get(bucket);
      if (again !== undefined) again.pending += increment - 1;
      throw err;
    });
  }

  /**
   * How many nodes may be answering from their own allowance: the most seen within the last window. A
   * node's view of the membership can drop a live peer for a moment (its heartbeat late under load), and a
   * smaller count would widen every local allowance; a larger one only sends more requests to Redis.
   */
  #sharing(now: number, windowMs: number): number {
    const seen = Math.max(1, this.#nodes());
    // Updated in place: this runs on every request.
    if (seen >= this.#sharers.nodes || now - this.#sharers.seenAtMs > windowMs) {
      this.#sharers.nodes = seen;
      this.#sharers.seenAtMs = now;
    }
    return this.#sharers.nodes;
  }

  /** Adds `increment` requests to the bucket in Redis and answers for the last of them. */
  async #counted(bucket: string, limit: number, windowMs: number, increment: number): Promise<RateLimitResult> {
    const [count, ttl] = await runScript<[number, number]>(
      this.redis,
      'hitRateLimit',
      [keys.rate(bucket)],
      [windowMs, increment],
    );
    const resetAtMs = this.#now() + ttl;
    if (this.#batchMs > 0) this.#learn(bucket, count, resetAtMs);
    return verdict(count, limit, resetAtMs);
  }

  #learn(bucket: string, count: number, resetAtMs: number): void {
    const now = this.#now();
    const b = this.#buckets.get(bucket);
    if (b === undefined || b.resetAtMs <= now) {
      this.#buckets.set(bucket, { known: count, learnedAtMs: now, pending: 0, resetAtMs });
      return;
    }
    // Answers of concurrent rounds can arrive out of order: the higher count is the later one.
    b.known = Math.max(b.known, count);
    b.learnedAtMs = now;
    b.resetAtMs = resetAtMs;
  }

  #scheduleFlush(): void {
    if (this.#closed) return;
    this.#flushTimer ??= setTimeout(() => {
      this.#flushTimer = undefined;
      void this.#flush();
    }, this.#batchMs).unref();
  }

  /** Sends every bucket's pending requests to Redis; what fails to arrive stays pending for the next round. */
  async #flush(): Promise<void> {
    const now = this.#now();
    const sends: Promise<void>[] = [];
    for (const [name, b] of this.#buckets) {
      if (b.pending === 0 || b.resetAtMs <= now) continue;
      const increment = b.pending;
      b.pending = 0;
      // The window length only matters for a counter that expired meanwhile: the rest of this one.
      const windowMs = Math.max(1, b.resetAtMs - now);
      sends.push(
        runScript<[number, number]>(this.redis, 'hitRateLimit', [keys.rate(name)], [windowMs, increment]).then(
          ([count, ttl]) => this.#learn(name, count, this.#now() + ttl),
          () => {
            b.pending += increment;
            this.#scheduleFlush();
          },
        ),
      );
    }
    await Promise.all(sends);
  }

  #sweep(): void {
    const now = this.#now();
    for (const [name, b] of this.#buckets) if (b.resetAtMs <= now) this.#buckets.delete(name);
  }

  async close(): Promise<void> {
    this.#closed = true;
    clearInterval(this.#sweeper);
    clearTimeout(this.#flushTimer);
    this.#flushTimer = undefined;
    // The last round is sent if Redis answers soon; a shutdown does not wait on an unreachable Redis.
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([this.#flush(), new Promise((resolve) => (timer = setTimeout(resolve, CLOSE_FLUSH_MS)))]);
    clearTimeout(timer);
  }
}

function verdict(count: number, limit: number, resetAtMs: number): RateLimitResult {
  return {
    allowed: count <= limit,
    limit,
    remaining: Math.max(0, limit - count),
    resetAt: Math.ceil(resetAtMs / 1000),
  };
}
