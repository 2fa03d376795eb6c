import type { Logger } from 'pino';
import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';

/** The verdict on one request against a fixed-window bucket. */
export interface RateLimitResult {
  allowed: boolean;
  limit: number;
  remaining: number;
  /** Unix seconds when the window resets. */
  resetAt: number;
}

/**
 * Counts requests per bucket in fixed windows. The in-memory implementation serves one node; the Redis
 * one shares each bucket across all nodes.
 */
export interface RateLimiter {
  /** A verdict at once when the limiter knows it without asking anyone (the common case), else a promise. */
  hit(bucket: string, limit: number, windowMs: number): RateLimitResult | Promise<RateLimitResult>;
  close(): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, { count: number; resetAtMs: number }>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    // Forget expired windows so that a flood of distinct (say, invalid) tokens cannot grow memory forever.
    this.#sweeper = setInterval(() => this.#sweep(), 30_000).unref();
  }

  hit(bucket: string, limit: number, windowMs: number): RateLimitResult {
    const now = this.now();
    let w = this.#windows.get(bucket);
    if (!w || w.resetAtMs <= now) {
      w = { count: 0, resetAtMs: now + windowMs };
      this.#windows.set(bucket, w);
    }
    w.count++;
    return {
      allowed: w.count <= limit,
      limit,
      remaining: Math.max(0, limit - w.count),
      resetAt: Math.ceil(w.resetAtMs / 1000),
    };
  }

  #sweep(): void {
    const now = this.now();
    for (const [k, w] of this.#windows) if (w.resetAtMs <= now) this.#windows.delete(k);
  }

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
  }
}

/**
 * The shared limiter (Redis), or this node's own while the shared one fails or does not answer within
 * `timeoutMs`: during a Redis outage (down, or hung) each node then limits on its own instead of refusing
 * or holding every request. Logged when that starts and ends.
 */
export class FallbackRateLimiter implements RateLimiter {
  #degraded = false;

  constructor(
    private readonly shared: RateLimiter,
    private readonly local: RateLimiter,
    private readonly log: Logger,
    private readonly timeoutMs = 1000,
    /** The shared limiter's deadline runs on it. */
    private readonly clock: Clock = systemClock,
  ) {}

  hit(bucket: string, limit: number, windowMs: number): RateLimitResult | Promise<RateLimitResult> {
    let answer: RateLimitResult | Promise<RateLimitResult>;
    try {
      answer = this.shared.hit(bucket, limit, windowMs);
    } catch (err) {
      return this.#local(err, bucket, limit, windowMs);
    }
    if (!(answer instanceof Promise)) return this.#shared(answer);
    return this.#awaited(answer, bucket, limit, windowMs);
  }

  async #awaited(
    answer: Promise<RateLimitResult>,
    bucket: string,
    limit: number,
    windowMs: number,
  ): Promise<RateLimitResult> {
    let cancel: Cancel | undefined;
    const late = new Promise<never>((_, reject) => {
      cancel = this.clock.after(this.timeoutMs, () => reject(new Error(`no answer within ${this.timeoutMs} ms`)));
    });
    // A late failure of the shared limiter, after the local one answered, must not go unhandled.
    answer.catch(() => undefined);
    try {
      return this.#shared(await Promise.race([answer, late]));
    } catch (err) {
      return this.#local(err, bucket, limit, windowMs);
    } finally {
      cancel?.();
    }
  }

  #shared(result: RateLimitResult): RateLimitResult {
    if (this.#degraded) {
      this.#degraded = false;
      this.log.warn('rate limits are shared across nodes again');
    }
    return result;
  }

  #local(err: unknown, bucket: string, limit: number, windowMs: number): RateLimitResult | Promise<RateLimitResult> {
    if (!this.#degraded) {
      this.#degraded = true;
      this.log.warn({ err }, 'shared rate limiter unavailable: each node limits on its own until Redis answers');
    }
    return this.local.hit(bucket, limit, windowMs);
  }

  async close(): Promise<void> {
    await Promise.all([this.shared.close(), this.local.close()]);
  }
}
