import type { NodeProcess } from '../test/cluster/node-process.js';

/** Each node's lost leases and event-loop stalls over the run, and the store calls that held its loop. */
export function printStalls(nodes: NodeProcess[]): void {
  console.log('lease losses and event-loop stalls, per node:');
  for (const node of nodes) {
    let lost = 0;
    const stalls: number[] = [];
    const blocking = new Map<string, number[]>();
    for (const line of node.output.split('\n')) {
      if (line.includes('"msg":"lease lost"')) lost++;
      else if (line.includes('"msg":"event loop stalled"')) stalls.push((JSON.parse(line) as { ms: number }).ms);
      else if (line.includes('"msg":"a store call blocked the event loop"')) {
        const { call, ms } = JSON.parse(line) as { call: string; ms: number };
        blocking.set(call, [...(blocking.get(call) ?? []), ms]);
      }
    }
    const calls = [...blocking]
      .sort(([, a], [, b]) => b.length - a.length)
      .map(([call, ms]) => `${call} ${ms.length}× (max ${Math.max(...ms)} ms)`);
    console.log(
      `  ${node.nodeId}: ${lost} lease losses, ${stalls.length} stalls` +
        (stalls.length ? ` (max ${Math.max(...stalls)} ms)` : '') +
        (calls.length ? `; store calls that held the loop: ${calls.join(', ')}` : ''),
    );
  }
}
