import { randomUUID } from 'node:crypto';
import { TimeoutError } from '../../errors.js';

/**
 * Requests sent to other phones, each waiting for its answer on our number for a bounded time (the
 * simulated network has no server to answer for a phone that is offline or gone).
 */
export class PendingAnswers {
  readonly #waiting = new Map<string, { settle: (ok: boolean) => void; timer: NodeJS.Timeout }>();

  constructor(
    private readonly timeoutMs: number,
    private readonly timeoutMessage: string,
  ) {}

  /** A new request id and its answer, which rejects with a TimeoutError once the bound has passed. */
  open(): { requestId: string; answer: Promise<boolean> } {
    const requestId = randomUUID();
    const answer = new Promise<boolean>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#waiting.delete(requestId);
        reject(new TimeoutError(this.timeoutMessage));
      }, this.timeoutMs);
      // A session closing with a request out must not keep the process alive for it.
      timer.unref();
      this.#waiting.set(requestId, { settle: resolve, timer });
    });
    return { requestId, answer };
  }

  settle(requestId: string, ok: boolean): void {
    const waiting = this.#waiting.get(requestId);
    if (!waiting) return;
    this.#waiting.delete(requestId);
    clearTimeout(waiting.timer);
    waiting.settle(ok);
  }

  /** Forgets a request nobody heard: its answer never settles. */
  cancel(requestId: string): void {
    const waiting = this.#waiting.get(requestId);
    if (waiting) clearTimeout(waiting.timer);
    this.#waiting.delete(requestId);
  }
}
