import { systemClock } from './clock.js';
import type { Cancel, Clock } from './clock.js';

export interface EventLoopDelayOptions {
  /** How often a sample is taken. @default 50 */
  sampleMs?: number;
  /** `recentMs` is the largest delay of at least this long. @default 1000 */
  windowMs?: number;
  /** @default systemClock */
  clock?: Clock;
  /** A single delay at least this long (ms) is reported through `onStall`. @default Infinity */
  stallMs?: number;
  /** Told of each stall, with its length in ms. */
  onStall?: (ms: number) => void;
}

/**
 * How late this process's timers run: a timer every `sampleMs` measures how much later than asked it
 * fired. A node whose loop is this far behind answers every call, lease renewal and socket that late,
 * so new work (logins) waits while it catches up instead of piling on.
 */
export class EventLoopDelay {
  readonly #sampleMs: number;
  readonly #windowMs: number;
  readonly #clock: Clock;
  #timer: Cancel | undefined;
  #last = 0;
  /** The largest delay of the current window and of the one before it. */
  #current = 0;
  #previous = 0;
  #windowStart = 0;

  constructor(private readonly options: EventLoopDelayOptions = {}) {
    this.#sampleMs = options.sampleMs ?? 50;
    this.#windowMs = options.windowMs ?? 1000;
    this.#clock = options.clock ?? systemClock;
  }

  start(): void {
    if (this.#timer) return;
    this.#last = this.#windowStart = this.#clock.now();
    this.#timer = this.#clock.every(this.#sampleMs, () => this.#sample(), { unref: true });
  }

  stop(): void {
    this.#timer?.();
    this.#timer = undefined;
  }

  /** The largest delay (ms) seen over at least the last window (up to two windows). */
  recentMs(): number {
    this.#roll(this.#clock.now());
    return Math.max(this.#current, this.#previous);
  }

  #sample(): void {
    const now = this.#clock.now();
    const delay = Math.max(0, now - this.#last - this.#sampleMs);
    this.#last = now;
    this.#roll(now);
    this.#current = Math.max(this.#current, delay);
    if (delay >= (this.options.stallMs ?? Number.POSITIVE_INFINITY)) this.options.onStall?.(Math.round(delay));
  }

  #roll(now: number): void {
    if (now - this.#windowStart < this.#windowMs) return;
    // A whole window without a sample (a long block) leaves nothing of it to keep.
    this.#previous = now - this.#windowStart < 2 * this.#windowMs ? this.#current : 0;
    this.#current = 0;
    this.#windowStart = now;
  }
}
