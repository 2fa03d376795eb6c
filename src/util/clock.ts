/** Cancels a timer of a `Clock`; cancelling twice, or after it ran, does nothing. */
export type Cancel = () => void;

/**
 * Time as long-lived components read it and wait on it: the system's (`systemClock`) in the service, a
 * manual one in unit tests, so that timing logic is tested by moving time rather than by sleeping.
 */
export interface Clock {
  /** Monotonic milliseconds (as `performance.now()`): durations and deadlines, never dates. */
  now(): number;
  /** Runs `fn` once, `ms` from now. `unref`: the timer alone does not keep the process alive. */
  after(ms: number, fn: () => void, options?: { unref?: boolean }): Cancel;
  /** Runs `fn` every `ms` until cancelled. */
  every(ms: number, fn: () => void, options?: { unref?: boolean }): Cancel;
}

export const systemClock: Clock = {
  now: () => performance.now(),
  after(ms, fn, options) {
    const timer = setTimeout(fn, ms);
    if (options?.unref) timer.unref();
    return () => clearTimeout(timer);
  },
  every(ms, fn, options) {
    const timer = setInterval(fn, ms);
    if (options?.unref) timer.unref();
    return () => clearInterval(timer);
  },
};
