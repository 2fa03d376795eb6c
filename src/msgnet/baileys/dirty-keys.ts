import type { Logger } from 'pino';
import type { SessionStorage } from './baileys-auth-state.js';

/**
 * Keys changed in memory and not yet stored, written in the background with one queued write at a time:
 * the write takes the keys when it starts (so it covers what changed while it waited), and a failed
 * write puts them back so that the next change stores them too.
 */
export class DirtyKeys {
  readonly #dirty = new Set<string>();
  #queued = false;

  constructor(
    private readonly storage: SessionStorage,
    /** The stored entries of these keys (null deletes one). */
    private readonly entriesOf: (keys: string[]) => Record<string, string | null>,
    private readonly log: Logger,
    /** What the log line says could not be stored. */
    private readonly what: string,
  ) {}

  get size(): number {
    return this.#dirty.size;
  }

  mark(key: string): void {
    this.#dirty.add(key);
  }

  /** Starts a write of the marked keys unless one is already waiting. */
  flush(): void {
    if (this.#queued || this.#dirty.size === 0) return;
    this.#queued = true;
    let taken: string[] = [];
    this.storage
      .write(() => {
        this.#queued = false;
        taken = [...this.#dirty];
        this.#dirty.clear();
        return this.entriesOf(taken);
      })
      .catch((err: unknown) => {
        taken.forEach((key) => this.#dirty.add(key));
        this.log.warn({ err }, `could not store ${this.what}`);
      });
  }
}
