import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/** What the heap holds after a full collection: what is really kept, not what is not yet collected. */
export interface HeapAfterGc {
  /** V8 heap in use (bytes). */
  heapUsed: number;
  /** Memory of Buffers and other objects outside the V8 heap (bytes), ArrayBuffers included. */
  external: number;
  rss: number;
}

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
  // Two passes with a turn between: finalizers and weak callbacks of the first free more for the second.
  collect();
  await new Promise((resolve) => setImmediate(resolve));
  collect();
  const { heapUsed, external, rss } = process.memoryUsage();
  return { heapUsed, external, rss };
}
