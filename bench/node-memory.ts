/**
 * A node's memory after full collections, read through the test-only `POST /api/cluster/probe-heap`
 * (the node runs with TEST_PROBE_FILE), for the benches that drive nodes through `NodeProcess`.
 */
import { sleep } from '../test/cluster/cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from '../test/cluster/node-process.js';
import type { NodeProcess } from '../test/cluster/node-process.js';

export interface NodeMemory {
  heapUsed: number;
  external: number;
  rss: number;
  actors: number;
  /** The longest full-collection pause of the read (ms). */
  gcPauseMs: number;
}

/** The smaller of two reads (a stray request may be in flight), a second apart, with the longer pause. */
export async function nodeMemory(node: NodeProcess): Promise<NodeMemory> {
  const read = async () => {
    const res = await node.api.post('/api/cluster/probe-heap', {}, { token: CLUSTER_ADMIN_TOKEN });
    if (res.status !== 200) throw new Error(`probe-heap on ${node.nodeId}: ${res.status} ${res.text}`);
    return res.body as NodeMemory;
  };
  const a = await read();
  // The probe stops the event loop; a node renewing its lease between reads is not measured losing it.
  await sleep(1000);
  const b = await read();
  return { ...(a.rss <= b.rss ? a : b), gcPauseMs: Math.max(a.gcPauseMs, b.gcPauseMs) };
}
