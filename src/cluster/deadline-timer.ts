/**
 * One timer for the deadlines of many pending calls, armed for the earliest one. A timer per call costs
 * an allocation and a clearTimeout on every answer; here an answered call costs nothing, and the timer
 * fires about once per deadline length while calls keep succeeding.
 */
export class DeadlineTimer {
  #timer: NodeJS.Timeout | undefined;
  #at = Number.POSITIVE_INFINITY;

  /**
   * @param expire ends every call whose deadline is within 1 ms of `now` (the timers' resolution) and
   *   returns the earliest deadline left (Infinity when none)
   */
  constructor(private readonly expire: (now: number) => number) {}

  /** A new deadline (performance.now() time); re-arms only if it is earlier than the armed one. */
  add(deadline: number): void {
    if (deadline < this.#at) this.#arm(deadline);
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
  }

  #arm(at: number): void {
    clearTimeout(this.#timer);
    this.#at = at;
    // Unref'd: the connections that could still answer a call keep the process alive, not its deadline.
    this.#timer = setTimeout(this.#fire, Math.max(1, Math.ceil(at - performance.now()))).unref();
  }

  readonly #fire = (): void => {
    this.#timer = undefined;
    this.#at = Number.POSITIVE_INFINITY;
    const next = this.expire(performance.now());
    if (next < this.#at) this.#arm(next);
  };
}
