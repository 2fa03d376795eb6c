/** How a retried operation backs off between its attempts. */
export interface Backoff {
  /** The delay after the first attempt (attempt 0). */
  baseMs: number;
  /** No delay is longer (`Infinity`: no cap). */
  maxMs: number;
  /**
   * `equal`: half the delay fixed and half random, so that many retriers of one dependency do not retry
   * in step; `none`: the delay itself.
   */
  jitter: 'equal' | 'none';
}

/** Waiting for a dependency to come back (the store, the webhook queue): 100 ms, doubling, capped at 5 s. */
export const DEPENDENCY_WAIT: Backoff = { baseMs: 100, maxMs: 5000, jitter: 'none' };

/**
 * The one backoff formula: `baseMs` doubled at each attempt (0 first), capped at `maxMs`, then jittered.
 * Every retry loop of the project takes its delays from here, each with its own parameters.
 */
export function backoffDelay(attempt: number, backoff: Backoff, random: () => number = Math.random): number {
  // 2^30 already overflows any sensible cap; a larger exponent would only risk Infinity * 0.
  const ceiling = Math.min(backoff.maxMs, backoff.baseMs * 2 ** Math.min(attempt, 30));
  return backoff.jitter === 'none' ? ceiling : ceiling / 2 + random() * (ceiling / 2);
}
