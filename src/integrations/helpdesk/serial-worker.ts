interface ControlJob {
  run: () => Promise<unknown>;
  resolve: (value: unknown) => void;
  reject: (err: unknown) => void;
}

export interface SerialWorkerOptions {
  /** The next queued job, if one may run now (called again after each job); undefined = idle. */
  next(): (() => Promise<void>) | undefined;
  /** Errors that stop the worker for good (its owner is gone). */
  fatal(err: unknown): boolean;
  /** A queued job threw something else (jobs handle their own failures; this is for the unexpected). */
  onError(err: unknown): void;
  /** The error given to control jobs refused or dropped once stopped. */
  stoppedError(): Error;
}

/**
 * Runs jobs one at a time: control jobs (awaitable, in submission order) before whatever `next()`
 * offers. `kick()` starts it when there may be work; it goes idle when there is none.
 */
export class SerialWorker {
  #controls: ControlJob[] = [];
  #loop: Promise<void> | undefined;
  #stopped = false;

  constructor(private readonly options: SerialWorkerOptions) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  control<T>(run: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      if (this.#stopped) {
        reject(this.options.stoppedError());
        return;
      }
      this.#controls.push({ run, resolve: resolve as (v: unknown) => void, reject });
      this.kick();
    });
  }

  kick(): void {
    if (this.#loop || this.#stopped || (this.#controls.length === 0 && !this.options.next())) return;
    this.#loop = this.#drain()
      .catch((err: unknown) => {
        if (this.options.fatal(err)) this.#stopped = true;
        else this.options.onError(err);
      })
      .finally(() => {
        this.#loop = undefined;
        this.kick();
      });
  }

  /** Refuses what waits and resolves once the job in progress has ended. */
  async stop(): Promise<void> {
    this.#stopped = true;
    for (const job of this.#controls.splice(0)) job.reject(this.options.stoppedError());
    await this.#loop;
  }

  async #drain(): Promise<void> {
    while (!this.#stopped) {
      const control = this.#controls.shift();
      if (control) {
        try {
          control.resolve(await control.run());
        } catch (err) {
          control.reject(err);
          if (this.options.fatal(err)) throw err;
        }
        continue;
      }
      const job = this.options.next();
      if (!job) return;
      await job();
    }
  }
}
