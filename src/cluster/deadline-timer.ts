import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';

/**
 * One timer for the deadlines of many pending calls, armed for the earliest one. A timer per call costs
 * an allocation and a clearTimeout on every answer; here an answered call costs nothing, and the timer
 * fires about once per deadline length while calls keep succeeding.
 */
export class DeadlineTimer {
  #cancel: Cancel | undefined;
  #at = Number.POSITIVE_INFINITY;

  /**
   * @param expire ends every call whose deadline is within 1 ms of `now` (the timers' resolution) and
   *   returns the earliest deadline left (Infinity when none)
   * @param clock deadlines are times of this clock
   */
  constructor(
    private readonly expire: (now: number) => number,
    private readonly clock: Clock = systemClock,
  ) {}

  /** A new deadline (a time of the clock); re-arms only if it is earlier than the armed one. */
  add(deadline: number): void {
    if (deadline < this.#at) this.#arm(deadline);
  }

  stop(): void {
    this.#cancel?.();
    this.#cancel = undefined;
    this.#at = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    this.#cancel?.();
    this.#at = at;
    // Unref'd: the connections that could still answer a call keep the process alive, not its deadline.
    this.#cancel = this.clock.after(Math.max(1, Math.ceil(at - this.clock.now())), this.#fire, { unref: true });
  }

  readonly #fire = (): void => {
    this.#cancel = undefined;
    this.#at = Number.POSITIVE_INFINITY;
    const next = this.expire(this.clock.now());
    if (next < this.#at) this.#arm(next);
  };
}
