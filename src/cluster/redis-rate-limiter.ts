import type { Redis } from 'ioredis';
import { keys } from '../redis/keys.js';
import { runScript } from '../redis/scripts.js';
import type { RateLimiter, RateLimitResult } from './rate-limiter.js';

/** One fixed-window bucket per token across all nodes (spec: every user of a token shares it). */
export class RedisRateLimiter implements RateLimiter {
  constructor(private readonly redis: Redis) {}

  async hit(bucket: string, limit: number, windowMs: number): Promise<RateLimitResult> {
    const [count, ttl] = await runScript<[number, number]>(this.redis, 'hitRateLimit', [keys.rate(bucket)], [windowMs]);
    return {
      allowed: count <= limit,
      limit,
      remaining: Math.max(0, limit - count),
      resetAt: Math.ceil((Date.now() + ttl) / 1000),
    };
  }

  async close(): Promise<void> {}
}
