import type { Logger } from 'pino';

/**
 * What a starting node has set up so far, undone in reverse order when a later step fails: a node that
 * cannot start leaves no listener, connection or file handle behind.
 */
export class Teardown {
  readonly #steps: { name: string; undo: () => Promise<void> | void }[] = [];

  add(name: string, undo: () => Promise<void> | void): void {
    this.#steps.push({ name, undo });
  }

  /** Undoes every step, the last first; a step that fails is logged and the others still run. */
  async run(log: Logger): Promise<void> {
    for (const { name, undo } of this.#steps.splice(0).reverse()) {
      try {
        await undo();
      } catch (err) {
        log.warn({ err, step: name }, 'could not undo a start-up step');
      }
    }
  }
}
