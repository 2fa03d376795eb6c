import type { Cancel, Clock } from '../../src/util/clock.js';

interface Timer {
  at: number;
  fn: () => void;
  /** Set for `every`: the period it runs again after. */
  period?: number;
  seq: number;
}

/** Lets every promise callback and I/O callback pending now run (no time passes on any clock). */
export const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

/**
 * A clock that moves only when the test says so: `advance(ms)` runs each timer due on the way, in time
 * order, and lets what it started settle before the next one. Unit tests of timing logic use it instead
 * of sleeping, so they neither wait nor depend on how busy the machine is.
 */
export class ManualClock implements Clock {
  #now: number;
  #seq = 0;
  readonly #timers = new Set<Timer>();

  constructor(start = 1_000_000) {
    this.#now = start;
  }

  now(): number {
    return this.#now;
  }

  after(ms: number, fn: () => void): Cancel {
    return this.#add({ at: this.#now + Math.max(0, ms), fn, seq: ++this.#seq });
  }

  every(ms: number, fn: () => void): Cancel {
    const period = Math.max(1, ms);
    return this.#add({ at: this.#now + period, fn, period, seq: ++this.#seq });
  }

  /** Timers waiting to run. */
  get pending(): number {
    return this.#timers.size;
  }

  /** A promise that resolves `ms` from now on this clock (a fake's slow answer). */
  wait(ms: number): Promise<void> {
    return new Promise((resolve) => this.after(ms, resolve));
  }

  /** Moves time forward by `ms`, running every timer that falls due on the way (also ones they add). */
  async advance(ms: number): Promise<void> {
    const end = this.#now + ms;
    await settle();
    for (let next = this.#next(end); next; next = this.#next(end)) {
      this.#now = next.at;
      if (next.period === undefined) this.#timers.delete(next);
      else next.at += next.period;
      next.fn();
      await settle();
    }
    this.#now = end;
    await settle();
  }

  #add(timer: Timer): Cancel {
    this.#timers.add(timer);
    return () => void this.#timers.delete(timer);
  }

  #next(end: number): Timer | undefined {
    let next: Timer | undefined;
    for (const t of this.#timers) {
      if (t.at <= end && (!next || t.at < next.at || (t.at === next.at && t.seq < next.seq))) next = t;
    }
    return next;
  }
}
