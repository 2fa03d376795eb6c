import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { nodeResource } from '../../src/cluster/lease-manager.js';
import { keys } from '../../src/redis/keys.js';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { NodeProcess } from '../cluster/node-process.js';
import { startChaosRedis } from './chaos-redis.js';
import type { ChaosRedis, ChaosRedisMode } from './chaos-redis.js';
import { TcpProxy } from './tcp-proxy.js';

/** Lease TTL of the chaos cluster: short, so that every fault plays out in seconds. */
export const CHAOS_TTL_MS = 2000;

/** One node of the chaos cluster: its process (when running) and its own path to a single Redis. */
export interface ChaosNode {
  id: string;
  /** Absent on a Redis Cluster or behind sentinels: the nodes reach those directly. */
  proxy: TcpProxy | undefined;
  process: NodeProcess | undefined;
}

/**
 * Real processes for the chaos run: Redis (chaos-redis.ts: one server with an append-only file synced
 * every second, reached by each node through its own TCP proxy so that the nemesis can partition one node
 * from it; or a Redis Cluster, or a master with sentinels), and node processes on one SQLite file.
 */
export class ChaosCluster {
  readonly nodes: ChaosNode[] = [];
  readonly probeFile: string;
  #store: SqliteStore | undefined;
  #seq = 0;

  private constructor(
    readonly redis: ChaosRedis,
    readonly dir: string,
    private readonly env: Record<string, string>,
    /** What each node needs to reach the messaging network (per node: a simulator behind its own proxy). */
    private readonly networkEnv: (nodeId: string) => Promise<Record<string, string>>,
  ) {
    this.probeFile = join(dir, 'probe.jsonl');
  }

  static async start(
    nodeCount: number,
    env: Record<string, string>,
    networkEnv: (nodeId: string) => Promise<Record<string, string>>,
    redisMode: ChaosRedisMode = 'single',
  ): Promise<ChaosCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-chaos-'));
    const redis = await startChaosRedis(redisMode, dir);
    const cluster = new ChaosCluster(
      redis,
      dir,
      {
        LEASE_TTL_MS: String(CHAOS_TTL_MS),
        RECONCILE_MS: '250',
        ...env,
      },
      networkEnv,
    );
    try {
      for (let i = 0; i < nodeCount; i++) await cluster.addNode();
    } catch (err) {
      // The nodes already started must not outlive a failed start.
      await cluster.stop().catch(() => undefined);
      throw err;
    }
    return cluster;
  }

  /** Every node process of the run, the dead ones too (their output, for `--keep-logs`). */
  readonly started: { node: string; process: NodeProcess }[] = [];

  /** Nodes whose process runs (paused or not). */
  get running(): ChaosNode[] {
    return this.nodes.filter((n) => n.process !== undefined);
  }

  async addNode(): Promise<ChaosNode> {
    const server = this.redis.server;
    const proxy = server ? await TcpProxy.start(server.port) : undefined;
    const node: ChaosNode = { id: `n${++this.#seq}`, proxy, process: undefined };
    this.nodes.push(node);
    await this.startNode(node);
    return node;
  }

  async startNode(node: ChaosNode): Promise<void> {
    const started = await NodeProcess.start({
      nodeId: node.id,
      dataDir: this.dir,
      probeFile: this.probeFile,
      env: { ...this.env, ...this.redis.env(node.proxy?.url), ...(await this.networkEnv(node.id)) },
    });
    node.process = started;
    this.started.push({ node: node.id, process: started });
  }

  async kill9(node: ChaosNode): Promise<void> {
    await node.process?.kill9();
    node.process = undefined;
  }

  async terminate(node: ChaosNode): Promise<void> {
    await node.process?.terminate();
    node.process = undefined;
  }

  async removeNode(node: ChaosNode): Promise<void> {
    await this.terminate(node);
    await node.proxy?.close();
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  /** CLIENT PAUSE on the server itself (not through a proxy): every node's commands wait. */
  async pauseRedis(ms: number): Promise<void> {
    await this.redis.admin().call('CLIENT', 'PAUSE', String(ms), 'ALL');
  }

  /**
   * The node holding each instance: the holder the store records, while that node's lease still carries
   * the token it took the instance with; undefined where none.
   */
  async owners(ids: string[]): Promise<(string | undefined)[]> {
    if (ids.length === 0) return [];
    this.#store ??= new SqliteStore(join(this.dir, SQLITE_FILE_NAME));
    const held = await this.#store.instances.ownership(ids);
    const nodes = [...new Set([...held.values()].flatMap((o) => (o.holder ? [o.holder.node] : [])))];
    // One GET per node: on a Redis Cluster the leases live in different slots.
    const admin = this.redis.admin();
    const tokens = await Promise.all(nodes.map((n) => admin.get(keys.lease(nodeResource(n)))));
    const current = new Map(nodes.map((n, i) => [n, tokens[i]]));
    return ids.map((id) => {
      const holder = held.get(id)?.holder;
      return holder && current.get(holder.node) === holder.token ? holder.node : undefined;
    });
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      node.process?.resume();
      await node.process?.kill9();
      await node.proxy?.close();
    }
    this.nodes.length = 0;
    await this.#store?.close();
    await this.redis.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
