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
  hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult>;
  close(): Promise<void>;
}

export class MemoryRateLimiter implements RateLimiter {
  readonly #windows = new Map<string, { count: number; resetAtMs: number }>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(private readonly now: () => number = Date.now) {
    // Forget expired windows so that a flood of distinct (say, invalid) tokens cannot grow memory forever.
    this.#sweeper = setInterval(() => this.#sweep(), 30_000).unref();
  }

  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult> {
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
