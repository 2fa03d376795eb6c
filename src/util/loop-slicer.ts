import { setImmediate as turn } from 'node:timers/promises';

/** How long a stretch of synchronous work may hold the event loop before it gives it a turn. @default */
export const SLICE_MS = 20;

/**
 * Cuts a long synchronous loop into slices: `due()` says when the current slice has run `sliceMs`, and
 * `yield()` lets timers and sockets run before the next one (`if (slicer.due()) await slicer.yield()` per
 * item: no promise for the items between). A node's lease is renewed on this event loop,
 * so one pass over 50,000 instances held in one piece (seconds) cost it every instance it owned.
 */
export class LoopSlicer {
  #start: number;

  constructor(
    private readonly sliceMs = SLICE_MS,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.#start = now();
  }

  /** True once the current slice has run its length. */
  due(): boolean {
    return this.now() - this.#start >= this.sliceMs;
  }

  /** Gives the event loop a turn (timers and I/O run), and starts a new slice. */
  async yield(): Promise<void> {
    await turn();
    this.#start = this.now();
  }
}
