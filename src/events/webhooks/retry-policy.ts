import { backoffDelay } from '../../util/backoff.js';

export interface RetryPolicy {
  /** Attempts in all, the first included. @default 8 */
  maxAttempts: number;
  /** Delay before the second attempt. @default 1000 */
  baseDelayMs: number;
  /** No delay is longer than this, Retry-After included. @default 300000 */
  maxDelayMs: number;
}

/**
 * Exponential backoff with "equal jitter": half the delay fixed, half random, so that retries of many
 * deliveries to one receiver spread out. A receiver's Retry-After wins when it asks for longer.
 */
export function nextDelayMs(
  policy: RetryPolicy,
  attempts: number,
  retryAfterMs?: number,
  random = Math.random,
): number {
  const backoff = { baseMs: policy.baseDelayMs, maxMs: policy.maxDelayMs, jitter: 'equal' } as const;
  const jittered = backoffDelay(Math.max(0, attempts - 1), backoff, random);
  return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
}
