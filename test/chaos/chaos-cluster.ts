import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { keys } from '../../src/redis/keys.js';
import { startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { NodeProcess } from '../cluster/node-process.js';
import { TcpProxy } from './tcp-proxy.js';

/** Lease TTL of the chaos cluster: short, so that every fault plays out in seconds. */
export const CHAOS_TTL_MS = 2000;

/** One node of the chaos cluster: its process (when running) and its own path to Redis. */
export interface ChaosNode {
  id: string;
  proxy: TcpProxy;
  process: NodeProcess | undefined;
}

/**
 * Real processes for the chaos run: one `redis-server` with an append-only file (a restart keeps its
 * data, as in production), and node processes on one SQLite file, each reaching Redis through its own
 * TCP proxy so that the nemesis can partition one node from Redis.
 */
export class ChaosCluster {
  readonly nodes: ChaosNode[] = [];
  readonly probeFile: string;
  readonly #admin: Redis;
  #seq = 0;

  private constructor(
    readonly redis: RedisServer,
    readonly dir: string,
    private readonly env: Record<string, string>,
  ) {
    this.probeFile = join(dir, 'probe.jsonl');
    this.#admin = new Redis(redis.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false });
    this.#admin.on('error', () => undefined);
  }

  static async start(nodeCount: number, env: Record<string, string>): Promise<ChaosCluster> {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-chaos-'));
    const redis = await startRedisServer({ appendOnlyDir: dir });
    const cluster = new ChaosCluster(redis, dir, {
      LEASE_TTL_MS: String(CHAOS_TTL_MS),
      RECONCILE_MS: '250',
      ...env,
    });
    for (let i = 0; i < nodeCount; i++) await cluster.addNode();
    return cluster;
  }

  /** Nodes whose process runs (paused or not). */
  get running(): ChaosNode[] {
    return this.nodes.filter((n) => n.process !== undefined);
  }

  async addNode(): Promise<ChaosNode> {
    const node: ChaosNode = { id: `n${++this.#seq}`, proxy: await TcpProxy.start(this.redis.port), process: undefined };
    this.nodes.push(node);
    await this.startNode(node);
    return node;
  }

  async startNode(node: ChaosNode): Promise<void> {
    node.process = await NodeProcess.start({
      nodeId: node.id,
      redisUrl: node.proxy.url,
      dataDir: this.dir,
      probeFile: this.probeFile,
      env: this.env,
    });
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
    await node.proxy.close();
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  /** CLIENT PAUSE on the server itself (not through a proxy): every node's commands wait. */
  async pauseRedis(ms: number): Promise<void> {
    await this.#admin.call('CLIENT', 'PAUSE', String(ms), 'ALL');
  }

  /** The node id each instance's owner key names (Redis), undefined where none. */
  async owners(ids: string[]): Promise<(string | undefined)[]> {
    if (ids.length === 0) return [];
    return (await this.#admin.mget(...ids.map((id) => keys.owner(id)))).map((v) => v ?? undefined);
  }

  async stop(): Promise<void> {
    for (const node of this.nodes) {
      node.process?.resume();
      await node.process?.kill9();
      await node.proxy.close();
    }
    this.nodes.length = 0;
    this.#admin.disconnect();
    await this.redis.stop();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
