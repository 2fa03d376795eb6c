import { systemClock } from '../util/clock.js';
import type { Cancel, Clock } from '../util/clock.js';

/**
 * WhatsApp Web's own reconnect ladder (1, 1, 2, 3 s…, Fibonacci), in milliseconds. A refusal pauses every
 * login of the node for the next step; each step is this or longer (upward jitter only), never shorter.
 */
export const WHATSAPP_WEB_LADDER_MS: readonly number[] = [
  1_000, 1_000, 2_000, 3_000, 5_000, 8_000, 13_000, 21_000, 34_000, 55_000, 89_000, 144_000,
];

/**
 * `pacing`: logins leave at the current rate; `backing-off`: WhatsApp refused one (429 or 503) and no
 * login leaves until the pause ends; `closed`: nothing leaves any more.
 */
export type ConnectPacerState = 'pacing' | 'backing-off' | 'closed';

export interface ConnectPacerOptions {
  /** Logins per second at most (CONNECT_RATE_PER_SECOND). */
  ratePerSecond: number;
  /** @default systemClock */
  clock?: Clock;
  /** @default Math.random */
  random?: () => number;
  /** Each login leaves at a random point of the first `jitter` of its slot (0 to 1). @default 0.5 */
  jitter?: number;
  /**
   * True while the node is too busy for another login (its event loop far behind): the next login waits,
   * checked again every `OVERLOAD_RECHECK_MS`, without a saved-up burst afterwards.
   */
  overloaded?: () => boolean;
}

/** How often a login held back by an overloaded node checks again. */
export const OVERLOAD_RECHECK_MS = 100;

interface Waiter {
  priority: number;
  seq: number;
  start: () => void;
}

/**
 * The logins of one node to WhatsApp, paced: each waiting session gets a slot on a grid of 1/rate seconds,
 * at a random point in its slot (so a window of any length holds at most rate × length + 2 logins), the
 * lowest priority first (the session away from WhatsApp the longest). A refusal (429 rate-overlimit, or
 * 503) pauses every login of the node for the next step of WhatsApp Web's ladder and halves the rate, so
 * the rest of the queue is spread out; each login that succeeds afterwards wins back a tenth of the rate
 * and, outside a pause, resets the ladder. A node too busy for another login (`overloaded`) holds the
 * next one back until it has caught up: a login brings a first sync and key uploads, and a node that takes
 * on more than it can do falls behind on its lease renewals and loses every instance at once.
 */
export class ConnectPacer {
  readonly #clock: Clock;
  readonly #random: () => number;
  readonly #jitter: number;
  readonly #maxRate: number;
  #rate: number;
  #queue: Waiter[] = [];
  #seq = 0;
  #timer: Cancel | undefined;
  /** Start of slot 0 of the current grid, and the next slot's index. */
  #anchor = Number.NEGATIVE_INFINITY;
  #slot = 0;
  #lastGrant = Number.NEGATIVE_INFINITY;
  #pausedUntil = Number.NEGATIVE_INFINITY;
  #step = 0;
  #closed = false;
  /** Refusals WhatsApp answered (metrics, benches). */
  refusals = 0;
  /** Logins let through. */
  granted = 0;
  /** Times a login due to leave waited because the node was overloaded (metrics, benches). */
  heldBack = 0;
  readonly #overloaded: () => boolean;

  constructor(options: ConnectPacerOptions) {
    if (!(options.ratePerSecond > 0)) throw new RangeError('ratePerSecond must be above 0');
    this.#clock = options.clock ?? systemClock;
    this.#random = options.random ?? Math.random;
    this.#jitter = Math.min(1, Math.max(0, options.jitter ?? 0.5));
    this.#maxRate = options.ratePerSecond;
    this.#rate = options.ratePerSecond;
    this.#overloaded = options.overloaded ?? (() => false);
  }

  get state(): ConnectPacerState {
    if (this.#closed) return 'closed';
    return this.#clock.now() < this.#pausedUntil ? 'backing-off' : 'pacing';
  }

  /** Logins waiting for their slot. */
  get waiting(): number {
    return this.#queue.length;
  }

  /** The rate logins leave at now (the configured one, or less after a refusal). */
  get rate(): number {
    return this.#rate;
  }

  /**
   * Queues a login: `start` runs once its slot comes, lowest `priority` first (ties in arrival order).
   * The returned function takes it out of the queue (a session closed meanwhile).
   */
  request(priority: number, start: () => void): Cancel {
    if (this.#closed) return () => undefined;
    const waiter: Waiter = { priority, seq: ++this.#seq, start };
    // Sorted insert: queues are at most the node's instances, and arrivals mostly append.
    let i = this.#queue.length;
    while (i > 0 && this.#before(waiter, this.#queue[i - 1]!)) i--;
    this.#queue.splice(i, 0, waiter);
    this.#arm();
    return () => {
      const at = this.#queue.indexOf(waiter);
      if (at >= 0) this.#queue.splice(at, 1);
    };
  }

  /** A login let through was answered with success: the rate recovers, the ladder resets. */
  loggedIn(): void {
    if (this.#closed) return;
    if (this.#clock.now() >= this.#pausedUntil) this.#step = 0;
    if (this.#rate < this.#maxRate) this.#setRate(Math.min(this.#maxRate, this.#rate + this.#maxRate / 10));
  }

  /**
   * WhatsApp refused a login (429) or said it is unavailable (503): every login of the node waits for the
   * ladder's next step and the rate halves. Refusals during a pause are of logins already under way and
   * count once.
   */
  refused(): void {
    if (this.#closed) return;
    this.refusals++;
    const now = this.#clock.now();
    if (now < this.#pausedUntil) return;
    const base = WHATSAPP_WEB_LADDER_MS[Math.min(this.#step, WHATSAPP_WEB_LADDER_MS.length - 1)]!;
    this.#step++;
    this.#pausedUntil = now + base * (1 + this.#random() / 4);
    this.#setRate(Math.max(this.#maxRate / 16, this.#rate / 2));
    this.#timer?.();
    this.#timer = undefined;
    this.#arm();
  }

  /** Drops every waiting login; later requests are ignored. */
  close(): void {
    this.#closed = true;
    this.#timer?.();
    this.#timer = undefined;
    this.#queue = [];
  }

  #before(a: Waiter, b: Waiter): boolean {
    return a.priority < b.priority || (a.priority === b.priority && a.seq < b.seq);
  }

  /** A new grid at the new rate, from the end of any pause and no earlier than one new gap after the last login. */
  #setRate(rate: number): void {
    this.#rate = rate;
    this.#anchor = Math.max(this.#clock.now(), this.#pausedUntil, this.#lastGrant + 1000 / rate);
    this.#slot = 0;
  }

  /** The time the next login may leave, and the grid moved along when it lies in the past. */
  #nextAt(): number {
    const gap = 1000 / this.#rate;
    const now = this.#clock.now();
    // Idle a while: a new grid from now (no saved-up burst), still one gap after the last login.
    if (this.#anchor + this.#slot * gap < now - gap) {
      this.#anchor = Math.max(now, this.#lastGrant + gap * (1 - this.#jitter));
      this.#slot = 0;
    }
    const slotStart = this.#anchor + this.#slot * gap;
    return Math.max(this.#pausedUntil, slotStart + this.#random() * this.#jitter * gap);
  }

  #arm(): void {
    if (this.#timer || this.#closed || this.#queue.length === 0) return;
    const at = this.#nextAt();
    this.#timer = this.#clock.after(Math.max(0, at - this.#clock.now()), () => {
      this.#timer = undefined;
      this.#grant();
    });
  }

  #grant(): void {
    if (this.#closed) return;
    // A refusal may have moved the pause past this slot while the timer waited.
    if (this.#clock.now() < this.#pausedUntil) return this.#arm();
    if (this.#queue.length && this.#overloaded()) {
      this.heldBack++;
      this.#timer = this.#clock.after(OVERLOAD_RECHECK_MS, () => {
        this.#timer = undefined;
        this.#grant();
      });
      return;
    }
    const next = this.#queue.shift();
    if (next) {
      this.#lastGrant = this.#clock.now();
      this.#slot++;
      this.granted++;
      next.start();
    }
    this.#arm();
  }
}
