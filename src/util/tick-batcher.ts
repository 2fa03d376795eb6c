/**
 * What a batch write reports: nothing when every item was written, or one entry per item (undefined for
 * an item written, the error of an item refused) when the backend answers per item.
 */
export type BatchOutcome = void | readonly unknown[];

interface Waiting<T> {
  item: T;
  resolve: () => void;
  reject: (err: unknown) => void;
}

export interface TickBatcherOptions {
  /**
   * Whether a failed batch of several items is written again one item at a time (so that one bad item
   * fails alone). False for errors that would fail every item the same way (an outage).
   * @default () => false
   */
  retryAlone?: (err: unknown) => boolean;
}

/**
 * Gathers the items added during one turn of the event loop and writes them with one call when the turn
 * ends (setImmediate). Each `add` resolves once its item's write succeeded, or rejects with its error, so
 * a caller that awaited `add` knows its own item is written exactly as if it had written it alone.
 */
export class TickBatcher<T> {
  #waiting: Waiting<T>[] = [];
  #scheduled: NodeJS.Immediate | undefined;
  #flushing: Promise<void> = Promise.resolve();

  constructor(
    private readonly write: (items: T[]) => Promise<BatchOutcome>,
    private readonly options: TickBatcherOptions = {},
  ) {}

  add(item: T): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ item, resolve, reject });
      this.#scheduled ??= setImmediate(() => void this.#flush());
    });
  }

  /** Writes what is gathered now, without waiting for the turn to end, and waits for every write begun. */
  async drain(): Promise<void> {
    if (this.#scheduled) {
      clearImmediate(this.#scheduled);
      void this.#flush();
    }
    await this.#flushing;
  }

  #flush(): Promise<void> {
    this.#scheduled = undefined;
    const batch = this.#waiting;
    this.#waiting = [];
    const run = this.#writeBatch(batch);
    this.#flushing = Promise.all([this.#flushing, run]).then(() => undefined);
    return run;
  }

  async #writeBatch(batch: Waiting<T>[]): Promise<void> {
    let outcome: BatchOutcome;
    try {
      outcome = await this.write(batch.map((w) => w.item));
    } catch (err) {
      if (batch.length > 1 && (this.options.retryAlone?.(err) ?? false)) {
        for (const w of batch) await this.#writeBatch([w]);
      } else {
        for (const w of batch) w.reject(err);
      }
      return;
    }
    batch.forEach((w, i) => {
      const err: unknown = outcome?.[i];
      if (err === undefined) w.resolve();
      else w.reject(err);
    });
  }
}
