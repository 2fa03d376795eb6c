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
  return new Promise((resolve) => {
    const onAbort = () => {
      clearTimeout(timer);
      resolve(false);
    };
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort);
      resolve(true);
    }, ms);
    signal.addEventListener('abort', onAbort, { once: true });
  });
}

/** The last `max` ids seen (the bot's own sends, to tell them from an operator's when they come back). */
export class RecentIds {
  readonly #ids = new Set<string>();

  constructor(private readonly max: number) {}

  add(id: string): void {
    this.#ids.add(id);
    if (this.#ids.size > this.max) this.#ids.delete(this.#ids.values().next().value!);
  }

  has(id: string): boolean {
    return this.#ids.has(id);
  }
}
