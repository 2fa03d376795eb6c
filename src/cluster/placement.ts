import { createHash } from 'node:crypto';

/** The rendezvous weight of `node` for an instance: the instance goes to the live node of the highest. */
export function nodeScore(node: string, instanceId: string): bigint {
  return createHash('sha1').update(node).update('\u0000').update(instanceId).digest().readBigUInt64BE(0);
}

/** A placement and the weight it won with. */
interface Placed {
  node: string;
  score: bigint;
}

/** Whether `a` wins over `b`: the higher weight, an equal weight to the smaller node id. */
function beats(a: Placed, b: Placed | undefined): boolean {
  return !b || a.score > b.score || (a.score === b.score && a.node < b.node);
}

/**
 * An instance's winner and runner-up over some nodes. `exact`: the runner-up is the best of every live node
 * but the winner (false once the winner left and the runner-up took its place: who is next is not known).
 */
interface Ranked {
  first: Placed;
  second: Placed | undefined;
  exact: boolean;
}

/** `from` weighed against `nodes` as well (all nodes when `from` is undefined). */
function rank(
  instanceId: string,
  nodes: readonly string[],
  score: typeof nodeScore,
  from?: Ranked,
): Ranked | undefined {
  let top = from;
  for (const node of nodes) {
    const p = { node, score: score(node, instanceId) };
    if (!top) top = { first: p, second: undefined, exact: true };
    else if (beats(p, top.first)) top = { first: p, second: top.first, exact: top.exact };
    else if (beats(p, top.second)) top = { ...top, second: p };
  }
  return top;
}

/**
 * Rendezvous (highest-random-weight) hashing: each instance goes to the live node with the highest
 * hash(node, instance). When a node joins, only the instances it now wins move (about 1/N); when one
 * leaves, only its own instances move.
 */
export function placeInstance(instanceId: string, nodeIds: readonly string[]): string | undefined {
  return rank(instanceId, nodeIds, nodeScore)?.first.node;
}

/**
 * `placeInstance` over the live nodes of each reconcile pass, remembered between passes: a pass places every
 * runnable instance each second, and one sha1 per node and instance cost a node about 300 ms a pass at
 * 20,000 instances over five nodes. Each instance's runner-up is remembered beside its node. When the live
 * nodes change, an instance whose node is still live can only go to a node that joined (it beat every
 * other one already): it is weighed against the joined nodes alone; one whose node left goes to its
 * runner-up (the best of the rest), weighed against the joined nodes. Only an instance whose runner-up is
 * not known or left too is placed afresh. So the pass that claims a dead node's instances, racing its
 * lease, hashes nothing, and a join costs one hash per instance. What a pass does not ask for is forgotten
 * (a deleted instance's answer does not stay).
 */
export class PlacementMemo {
  #live: ReadonlySet<string> = new Set();
  #placed = new Map<string, Ranked | undefined>();

  constructor(private readonly score: typeof nodeScore = nodeScore) {}

  /**
   * The placement function for one pass over `live`. A pass forgets what it does not ask for, unless it
   * `keeps` the rest: a pass that places only a departed node's instances keeps everyone else's answer
   * (each still the best of the nodes it was weighed against, all of them live or gone since).
   */
  pass(live: readonly string[], options: { keep?: boolean } = {}): (instanceId: string) => string | undefined {
    const before = this.#placed;
    const liveNow = new Set(live);
    const all = [...liveNow];
    const joined = all.filter((n) => !this.#live.has(n));
    const now = options.keep ? before : new Map<string, Ranked | undefined>();
    const asked = options.keep ? new Set<string>() : undefined;
    this.#live = liveNow;
    this.#placed = now;
    const alive = (p: Placed | undefined) => p === undefined || liveNow.has(p.node);
    return (id) => {
      if (asked ? asked.has(id) : now.has(id)) return now.get(id)?.first.node;
      asked?.add(id);
      const was = before.get(id);
      let placed: Ranked | undefined;
      if (was && liveNow.has(was.first.node) && alive(was.second)) placed = rank(id, joined, this.score, was);
      else if (was && !liveNow.has(was.first.node) && was.exact && was.second && liveNow.has(was.second.node)) {
        placed = rank(id, joined, this.score, { first: was.second, second: undefined, exact: false });
      } else placed = rank(id, all, this.score);
      now.set(id, placed);
      return placed?.first.node;
    };
  }
}
