import { setTimeout as wait } from 'node:timers/promises';
/**
 * One ordered lane of work per chat: a chat's messages, timers, sends and session controls run one after
 * another, while different chats of the instance proceed side by side (a typing delay in one chat never
 * holds up another).
 */
export class ChatLanes {
  readonly #tails = new Map<string, Promise<void>>();

  run<T>(chat: string, job: () => Promise<T>): Promise<T> {
    const result = (this.#tails.get(chat) ?? Promise.resolve()).then(job);
    const tail = result.then(
      () => undefined,
      () => undefined,
    );
    this.#tails.set(chat, tail);
    void tail.then(() => {
      if (this.#tails.get(chat) === tail) this.#tails.delete(chat);
    });
    return result;
  }

  /** Resolves when every lane has run out of work (new work may follow). */
  async idle(): Promise<void> {
    while (this.#tails.size > 0) await Promise.all([...this.#tails.values()]);
  }
}

/** Waits `ms`; false when `signal` aborted it (or had already). */
export function sleep(ms: number, signal: AbortSignal): Promise<boolean> {
  if (signal.aborted) return Promise.resolve(false);
  if (ms <= 0) return Promise.resolve(true);
  return wait(ms, true, { signal }).catch(() => false);
}
