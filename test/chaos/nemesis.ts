import Database from 'better-sqlite3';
import { join } from 'node:path';
import type { ChaosCluster, ChaosNode } from './chaos-cluster.js';
import { CHAOS_TTL_MS } from './chaos-cluster.js';
import type { ChaosNetwork, NetworkFault } from './chaos-network.js';
import type { ChaosRedisMode } from './chaos-redis.js';
import type { History } from './history.js';
import type { Random } from './random.js';
import type { ChaosInstance } from './workload.js';

/** Faults of one Redis server, reached through each node's own proxy: a single Redis only. */
const SINGLE_REDIS_FAULTS = [
  'redis-restart',
  'redis-kill',
  'redis-empty',
  'redis-pause',
  'partition-stall',
  'partition-cut',
  'subscriber-stall',
] as const;

/** The faults of the cluster itself (processes, Redis, the store); each heals before the next begins. */
export const FAULTS = [
  'kill-9',
  'sigstop',
  'short-pause',
  'sigterm',
  'join-or-leave',
  ...SINGLE_REDIS_FAULTS,
  'store-lock',
  'redis-failover',
] as const;
export type Fault = (typeof FAULTS)[number];
const SINGLE_ONLY: ReadonlySet<Fault> = new Set(SINGLE_REDIS_FAULTS);

/** The faults that apply to a run on this Redis: a failover needs a replica, a partition a proxy. */
export function faultsFor(mode: ChaosRedisMode): Fault[] {
  return FAULTS.filter((f) => (mode === 'single' ? f !== 'redis-failover' : !SINGLE_ONLY.has(f)));
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Longer than the lease TTL: a paused or cut-off owner surely loses its leases meanwhile. */
const PAST_TTL_MS = Math.round(CHAOS_TTL_MS * 1.6);

/** How long the nodes wait for a locked store (the run's SQLITE_BUSY_TIMEOUT_MS). */
export const CHAOS_BUSY_TIMEOUT_MS = 1000;

export interface NemesisOptions {
  minNodes: number;
  maxNodes: number;
  /** Faults of the run's other parts (the broker's), beside the cluster's and the network's. */
  faults?: NetworkFault[];
}

/**
 * Injects one seeded fault at a time (the cluster's, or the messaging network's), recording each in the
 * history.
 */
export class Nemesis {
  faults = 0;

  constructor(
    private readonly cluster: ChaosCluster,
    private readonly network: ChaosNetwork,
    private readonly random: Random,
    private readonly history: History,
    private readonly instances: ChaosInstance[],
    private readonly o: NemesisOptions,
  ) {}

  /** One fault, healed before it returns. */
  async strike(): Promise<void> {
    const own = [...this.network.faults, ...(this.o.faults ?? [])];
    const names = [...faultsFor(this.cluster.redis.mode), ...own.map((f) => f.name)];
    const fault = this.random.pick(names);
    const node = this.random.pick(this.cluster.running);
    const instance = this.random.pick(this.instances);
    const started = this.history.invoke('nemesis', fault, { node: node.id, instance: instance.name });
    try {
      const theirs = own.find((f) => f.name === fault);
      if (theirs) await theirs.inject({ node, instance, random: this.random });
      else await this.#inject(fault as Fault, node);
      this.faults++;
      this.history.ok(started);
    } catch (err) {
      this.history.fail(started, (err as Error).message);
    }
  }

  /** What a network fault may leave behind once the run is over: every node's path healed. */
  async healNetwork(): Promise<void> {
    for (const node of this.cluster.nodes) node.proxy?.heal();
  }

  async #inject(fault: Fault, node: ChaosNode): Promise<void> {
    const { cluster } = this;
    // Only a single Redis has these (faultsFor keeps the others from being picked).
    const server = () => cluster.redis.server!;
    const proxy = () => node.proxy!;
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
      case 'short-pause':
        // Below the TTL: the owner keeps its leases, but may wake between its check and its side effect.
        node.process!.pause();
        await sleep(this.random.int(100, Math.round(CHAOS_TTL_MS * 0.7)));
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
        await server().stop();
        await sleep(this.random.int(100, 1000));
        await server().restart();
        return;
      case 'redis-kill':
        // A crash under `appendfsync everysec`: the last second of writes (leases, counters, queued events) is lost.
        await server().kill9();
        await sleep(this.random.int(100, 1000));
        await server().restart();
        return;
      case 'redis-empty':
        // Redis back with nothing: every lease, owner key and queued entry gone at once.
        await server().stop();
        await sleep(this.random.int(100, 500));
        await server().restart({ empty: true });
        return;
      case 'redis-pause':
        await cluster.pauseRedis(PAST_TTL_MS);
        await sleep(PAST_TTL_MS);
        return;
      case 'partition-stall':
        proxy().stall();
        await sleep(PAST_TTL_MS);
        proxy().heal();
        return;
      case 'partition-cut':
        proxy().stall();
        proxy().cut();
        await sleep(PAST_TTL_MS);
        proxy().heal();
        return;
      case 'subscriber-stall':
        // One way: the node's commands pass, its pub/sub messages (calls routed to it, news) do not.
        proxy().stallSubscribers();
        await sleep(PAST_TTL_MS);
        proxy().heal();
        return;
      case 'redis-failover':
        // The primary (of one shard) killed: a replica that may lack its last writes is promoted.
        await cluster.redis.failover((items) => this.random.pick(items));
        return;
      case 'store-lock': {
        // Another process holds the store's write lock past the nodes' busy timeout.
        const db = new Database(join(cluster.dir, 'switchboard.db'));
        try {
          db.exec('BEGIN IMMEDIATE');
          await sleep(CHAOS_BUSY_TIMEOUT_MS + this.random.int(200, 1500));
          db.exec('ROLLBACK');
        } finally {
          db.close();
        }
        return;
      }
    }
  }
}
