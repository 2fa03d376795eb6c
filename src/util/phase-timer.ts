import type { Clock } from './clock.js';

/** The durations of one job's consecutive phases, on a clock: where a slow job spent its time. */
export class PhaseTimer {
  #last: number;
  readonly #ms: Record<string, number> = {};

  constructor(private readonly clock: Clock) {
    this.#last = clock.now();
  }

  /** Ends the phase called `phase` now; the next one starts here. */
  mark(phase: string): void {
    const now = this.clock.now();
    this.#ms[phase] = Math.round((now - this.#last) * 10) / 10;
    this.#last = now;
  }

  /** Milliseconds per phase, in the order they ended. */
  all(): Record<string, number> {
    return { ...this.#ms };
  }
}
