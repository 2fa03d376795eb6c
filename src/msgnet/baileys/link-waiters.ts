import { NotConnectedError, TimeoutError } from '../../errors.js';
import type { Cancel, Clock } from '../../util/clock.js';

/** How a pending `connect` ends: the phone has a QR to scan, or the link is open. */
export type LinkOutcome = { kind: 'qr'; qr: string } | { kind: 'open' };

interface Waiter {
  resolve: (outcome: LinkOutcome) => void;
  reject: (err: unknown) => void;
  timer: Cancel;
}

/** `connect` calls waiting for the socket's first QR or its opening, each with a deadline. */
export class LinkWaiters {
  readonly #waiters = new Set<Waiter>();

  constructor(
    private readonly timeoutMs: number,
    private readonly clock: Clock,
  ) {}

  wait(): Promise<LinkOutcome> {
    return new Promise<LinkOutcome>((resolve, reject) => {
      const waiter: Waiter = {
        resolve,
        reject,
        timer: this.clock.after(this.timeoutMs, () => {
          this.#waiters.delete(waiter);
          reject(new TimeoutError());
        }),
      };
      this.#waiters.add(waiter);
    });
  }

  settle(outcome: LinkOutcome): void {
    for (const waiter of this.#take()) waiter.resolve(outcome);
  }

  /** The link will not come (closed for good, logged out, session closed). */
  fail(err: unknown = new NotConnectedError()): void {
    for (const waiter of this.#take()) waiter.reject(err);
  }

  #take(): Waiter[] {
    const waiters = [...this.#waiters];
    this.#waiters.clear();
    for (const waiter of waiters) waiter.timer();
    return waiters;
  }
}
