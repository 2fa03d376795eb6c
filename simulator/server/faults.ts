import type { Device } from './directory.js';

/** The faults WhatsApp really produces, each injectable on a device's current connection. */
export const FAULT_KINDS = ['replaced', 'close', 'lost', 'restart', 'logout', 'duplicate', 'slow'] as const;
export type FaultKind = (typeof FAULT_KINDS)[number];

/** What a fault did, for the control API's answer and the log. */
export interface FaultOutcome {
  kind: FaultKind;
  device?: string;
  connection?: string;
  applied: boolean;
  detail?: string;
}

/**
 * WhatsApp refuses logins past a rate (429, rate-overlimit). A token bucket per simulator:
 * `loginsPerSecond` tokens a second, a burst of as many; 0 turns the limit off.
 */
export class LoginLimiter {
  #rate = 0;
  #tokens = 0;
  #at = 0;
  refused = 0;

  constructor(private readonly now: () => number = Date.now) {}

  set(loginsPerSecond: number): void {
    this.#rate = Math.max(0, loginsPerSecond);
    this.#tokens = this.#rate;
    this.#at = this.now();
  }

  get rate(): number {
    return this.#rate;
  }

  /** Takes a token; false means the login is refused. */
  take(): boolean {
    if (this.#rate <= 0) return true;
    const now = this.now();
    this.#tokens = Math.min(this.#rate, this.#tokens + ((now - this.#at) / 1000) * this.#rate);
    this.#at = now;
    if (this.#tokens >= 1) {
      this.#tokens -= 1;
      return true;
    }
    this.refused++;
    return false;
  }
}

/** A small seeded generator (mulberry32), so a fault schedule replays from its seed. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface FaultSchedule {
  seed: number;
  /** Mean time between two faults. */
  everyMs: number;
  kinds: FaultKind[];
}

/**
 * Injects faults on a seeded random schedule: each tick picks one connected companion and one kind.
 * `pick` returns the candidates; `inject` applies a fault.
 */
export class FaultScheduler {
  #timer: NodeJS.Timeout | undefined;
  #random: () => number = Math.random;
  injected = 0;

  constructor(
    private readonly pick: () => Device[],
    private readonly inject: (kind: FaultKind, device: Device) => FaultOutcome,
  ) {}

  start(schedule: FaultSchedule): void {
    this.stop();
    this.#random = seededRandom(schedule.seed);
    const kinds = schedule.kinds.length ? schedule.kinds : [...FAULT_KINDS];
    const next = (): void => {
      // Exponential gaps around the mean, like independent failures.
      const gap = -Math.log(1 - this.#random()) * schedule.everyMs;
      this.#timer = setTimeout(() => {
        const candidates = this.pick();
        if (candidates.length) {
          const device = candidates[Math.floor(this.#random() * candidates.length)]!;
          const kind = kinds[Math.floor(this.#random() * kinds.length)]!;
          if (this.inject(kind, device).applied) this.injected++;
        }
        next();
      }, gap);
      this.#timer.unref();
    };
    next();
  }

  stop(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
  }
}
