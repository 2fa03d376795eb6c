import type { ChaosCluster, ChaosNode } from './chaos-cluster.js';
import { CHAOS_TTL_MS } from './chaos-cluster.js';
import type { History } from './history.js';
import type { Random } from './random.js';

/** The faults the nemesis injects; each one heals before the next begins. */
export const FAULTS = [
  'kill-9',
  'sigstop',
  'sigterm',
  'join-or-leave',
  'redis-restart',
  'redis-pause',
  'partition-stall',
  'partition-cut',
] as const;
export type Fault = (typeof FAULTS)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Longer than the lease TTL: a paused or cut-off owner surely loses its leases meanwhile. */
const PAST_TTL_MS = Math.round(CHAOS_TTL_MS * 1.6);

export interface NemesisOptions {
  minNodes: number;
  maxNodes: number;
}

/** Injects one seeded fault at a time into the cluster, recording each in the history. */
export class Nemesis {
  faults = 0;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly random: Random,
    private readonly history: History,
    private readonly o: NemesisOptions,
  ) {}

  /** One fault, healed before it returns. */
  async strike(): Promise<void> {
    const fault = this.random.pick(FAULTS);
    const node = this.random.pick(this.cluster.running);
    const started = this.history.invoke('nemesis', fault, { node: node.id });
    try {
      await this.#inject(fault, node);
      this.faults++;
      this.history.ok(started);
    } catch (err) {
      this.history.fail(started, (err as Error).message);
    }
  }

  async #inject(fault: Fault, node: ChaosNode): Promise<void> {
    const { cluster } = this;
    switch (fault) {
      case 'kill-9':
        await cluster.kill9(node);
        await sleep(this.random.int(200, 1500));
        await cluster.startNode(node);
        return;
      case 'sigstop':
        node.process!.pause();
        await sleep(PAST_TTL_MS);
        node.process!.resume();
        return;
      case 'sigterm':
        await cluster.terminate(node);
        await cluster.startNode(node);
        return;
      case 'join-or-leave':
        if (cluster.running.length < this.o.maxNodes && this.random.int(0, 1) === 0) await cluster.addNode();
        else if (cluster.nodes.length > this.o.minNodes) await cluster.removeNode(node);
        else await cluster.addNode();
        return;
      case 'redis-restart':
        await cluster.redis.stop();
        await sleep(this.random.int(100, 1000));
        await cluster.redis.restart();
        return;
      case 'redis-pause':
        await cluster.pauseRedis(PAST_TTL_MS);
        await sleep(PAST_TTL_MS);
        return;
      case 'partition-stall':
        node.proxy.stall();
        await sleep(PAST_TTL_MS);
        node.proxy.heal();
        return;
      case 'partition-cut':
        node.proxy.stall();
        node.proxy.cut();
        await sleep(PAST_TTL_MS);
        node.proxy.heal();
        return;
    }
  }
}
