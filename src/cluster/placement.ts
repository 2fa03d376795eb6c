import { createHash } from 'node:crypto';

/**
 * Rendezvous (highest-random-weight) hashing: each instance goes to the live node with the highest
 * hash(node, instance). When a node joins, only the instances it now wins move (about 1/N); when one
 * leaves, only its own instances move.
 */
export function placeInstance(instanceId: string, nodeIds: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestScore = -1n;
  for (const node of nodeIds) {
    const score = createHash('sha1').update(node).update('\u0000').update(instanceId).digest().readBigUInt64BE(0);
    if (score > bestScore || (score === bestScore && best !== undefined && node < best)) {
      best = node;
      bestScore = score;
    }
  }
  return best;
}
