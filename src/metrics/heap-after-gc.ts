import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What the heap holds after a full collection: what is really kept, not what is not yet collected. */
export interface HeapAfterGc {
  /** V8 heap in use (bytes). */
  heapUsed: number;
  /** Memory of Buffers and other objects outside the V8 heap (bytes), ArrayBuffers included. */
  external: number;
  rss: number;
  /** The longest of the collections' pauses (ms): the time the event loop stood still for this read. */
  gcPauseMs: number;
}

/** Longer than a lease renewal period at the default TTL (2.5 s / 3). */
const BETWEEN_COLLECTIONS_MS = 1000;

let gc: (() => void) | undefined;

/** A node not started with --expose-gc gets the function from a fresh context once the flag is set. */
function collector(): () => void {
  if (!gc) {
    setFlagsFromString('--expose-gc');
    gc = runInNewContext('gc') as () => void;
  }
  return gc;
}

/**
 * Runs full garbage collections, then reads the memory. Tests and benches only (the probe endpoint): a full
 * collection stops the process for as long as it takes.
 */
export async function heapAfterGc(): Promise<HeapAfterGc> {
  const collect = collector();
  const timed = () => {
    const start = performance.now();
    collect();
    return performance.now() - start;
  };
  const first = timed();
  // Two passes: finalizers and weak callbacks of the first free more for the second. A second between them
  // lets the lease renewals the first held up run and be answered: back to back, two pauses of a large heap
  // (a second each at 1,000 sessions) outlast the lease, and the node being measured loses its instances.
  await new Promise((resolve) => setTimeout(resolve, BETWEEN_COLLECTIONS_MS));
  const second = timed();
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss, gcPauseMs: Math.max(first, second) };
}
