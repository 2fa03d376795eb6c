/** Exponential delay between attempts at something that waits for a dependency: 100 ms, doubling, capped. */
export function retryDelay(attempt: number, maxMs = 5000): number {
  return Math.min(maxMs, 100 * 2 ** attempt);
}
