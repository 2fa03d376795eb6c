import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { AccountService } from '../../src/accounts/account-service.js';
import { placeInstance } from '../../src/cluster/placement.js';
import { InstanceService } from '../../src/instances/instance-service.js';
import { keys } from '../../src/redis/keys.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { nodeResource } from '../../src/cluster/lease-manager.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import type { InstanceRecord } from '../../src/store/records.js';
import { SINGLE_REDIS } from '../helpers/redis-kinds.js';
import type { RedisKind, RedisUnderTest } from '../helpers/redis-kinds.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { CLUSTER_ADMIN_TOKEN, CLUSTER_ENCRYPTION_KEY, NodeProcess } from './node-process.js';
import { readOwners, readProbe, staleWrites, twoOwners } from './probe-checker.js';

/** Lease TTL of the test clusters: short, so that failover cases run in seconds. */
export const TEST_TTL_MS = 2000;

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

type Api = NodeProcess['api'];

/**
 * Connects an instance and links it on the sandbox phone. A QR waiting on one owner ends when the
 * instance is placed again (nodes still joining), so a link that finds no QR connects again.
 */
export async function connectAndLink(
  connectVia: Api,
  linkVia: Api,
  name: string,
  token: string,
  body: { number?: string } = {},
): Promise<void> {
  for (let attempt = 1; ; attempt++) {
    const connect = await connectVia.get(`/api/instance/connect/${name}`, { token });
    if (connect.body?.status !== 'qr') throw new Error(`connect ${name}: ${JSON.stringify(connect.body)}`);
    const link = await linkVia.post(`/api/sandbox/link/${name}`, body, { token });
    if (link.status === 200) return;
    if (link.status !== 409 || attempt === 5) {
      throw new Error(`link ${name}: ${link.status} ${JSON.stringify(link.body)}`);
    }
  }
}

/**
 * A test cluster: Redis (one redis-server unless another kind is given) and N node processes on one SQLite
 * file, with the write probe on.
 * Nodes can be killed, paused, stopped and added; `check()` reads the probe and returns the stale writes.
 */
export class ClusterFixture {
  readonly nodes: NodeProcess[] = [];
  readonly probeFile: string;
  readonly store: SqliteStore;
  readonly #watch: RedisClient;
  #seq = 0;
  accountToken = '';
  instanceIds: string[] = [];

  private constructor(
    readonly backend: RedisUnderTest,
    readonly dataDir: string,
    private readonly env: Record<string, string>,
  ) {
    this.probeFile = join(dataDir, 'probe.jsonl');
    this.store = new SqliteStore(join(dataDir, 'switchboard.db'));
    this.#watch = backend.watcher();
  }

  /** The one redis-server, for cases that restart, kill or pause it. */
  get redis(): RedisServer {
    if (!this.backend.server) throw new Error(`this cluster runs on REDIS_MODE=${this.backend.mode}, not one server`);
    return this.backend.server;
  }

  static async start(
    nodeCount: number,
    env: Record<string, string> = {},
    kind: RedisKind = SINGLE_REDIS,
  ): Promise<ClusterFixture> {
    const backend = await kind.start();
    const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-cluster-'));
    const fixture = new ClusterFixture(backend, dataDir, {
      ...backend.env,
      LEASE_TTL_MS: String(TEST_TTL_MS),
      RECONCILE_MS: '250',
      ...env,
    });
    try {
      for (let i = 0; i < nodeCount; i++) await fixture.addNode();
      await fixture.waitForMembers(nodeCount);
    } catch (err) {
      // The nodes already started must not outlive a failed start.
      await fixture.stop().catch(() => undefined);
      throw err;
    }
    return fixture;
  }

  /** Starts one more node; `nodeId` defaults to the next `n<k>`. */
  async addNode(env: Record<string, string> = {}, nodeId = `n${++this.#seq}`): Promise<NodeProcess> {
    const node = await NodeProcess.start({
      nodeId,
      redisUrl: this.backend.url,
      dataDir: this.dataDir,
      probeFile: this.probeFile,
      env: { ...this.env, ...env },
    });
    this.nodes.push(node);
    return node;
  }

  /** A live node other than those given (to send requests through). */
  other(...not: NodeProcess[]): NodeProcess {
    const node = this.nodes.find((n) => !not.includes(n));
    if (!node) throw new Error('no other node');
    return node;
  }

  remove(node: NodeProcess): void {
    this.nodes.splice(this.nodes.indexOf(node), 1);
  }

  /**
   * Until every node sees `count` members: a node learns of a joiner at its own next heartbeat, and what a
   * node does with its view (placement, the rate limiter's share) is only predictable once all views agree.
   */
  async waitForMembers(count: number, timeoutMs = 10_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const views = await Promise.all(
        this.nodes.map(async (n) => {
          const res = await n.api.get('/api/cluster/nodes', { token: CLUSTER_ADMIN_TOKEN });
          return res.status === 200 ? (res.body.nodes as { nodeId: string }[]).map((m) => m.nodeId) : res.body;
        }),
      );
      if (views.every((v) => Array.isArray(v) && v.length === count)) return;
      if (Date.now() > deadline) {
        throw new Error(`expected ${count} members on every node, got ${JSON.stringify(views)}`);
      }
      await sleep(100);
    }
  }

  /**
   * Creates an account (its token becomes `accountToken`) and `count` instances straight in the shared
   * store: the HTTP creation path has its own tests and rate limit. Not linked, so not runnable yet.
   */
  async createInstances(count: number): Promise<InstanceRecord[]> {
    const { account, token } = await new AccountService(this.store, Math.max(10_000, count + 100)).create({
      name: `acct-${Date.now()}`,
    });
    this.accountToken = token;
    const instances = new InstanceService({
      store: this.store,
      secrets: new SecretBox(Buffer.from(CLUSTER_ENCRYPTION_KEY, 'hex')),
      allowPrivateUrls: false,
      logger: pino({ level: 'silent' }),
    });
    for (let i = 0; i < count; i++) await instances.create(account, { name: `inst-${i}` });
    return this.store.instances.listByAccount(account.id);
  }

  /**
   * `createInstances`, then links each through the nodes (making it runnable), all at once; returns their
   * ids. Benches of thousands link a few at a time instead (bench/seed-instances.ts).
   */
  async seed(count: number): Promise<string[]> {
    const created = await this.createInstances(count);
    // Link through different nodes so that routing is exercised from the start.
    const linked = await Promise.all(
      created.map((inst, i) => this.probe(this.nodes[i % this.nodes.length]!, inst.name, 'link')),
    );
    const failed = linked.find((r) => r.status !== 200);
    if (failed) throw new Error(`link failed: ${JSON.stringify(failed.body)}`);
    this.instanceIds = created.map((i) => i.id);
    return this.instanceIds;
  }

  probe(node: NodeProcess, instanceName: string, op: 'describe' | 'write' | 'link') {
    return node.api.post(`/api/cluster/probe/${instanceName}`, { op }, { token: this.accountToken });
  }

  /**
   * The node holding each instance: the holder the store records, while that node's lease still carries
   * the token it took the instance with (a node that lost its lease runs none of them). A singleton role,
   * `singleton:<name>`: the node whose token its lease holds.
   */
  async owners(ids = this.instanceIds): Promise<(string | undefined)[]> {
    if (ids.length === 0) return [];
    const held = await this.store.instances.ownership(ids);
    const nodes = [...new Set([...held.values()].flatMap((o) => (o.holder ? [o.holder.node] : [])))];
    const tokens = nodes.length ? await this.#watch.mget(...nodes.map((n) => keys.lease(nodeResource(n)))) : [];
    const current = new Map(nodes.map((n, i) => [n, tokens[i]]));
    return Promise.all(
      ids.map(async (id) => {
        if (id.startsWith('singleton:')) return ((await this.#watch.get(keys.lease(id))) ?? undefined)?.split('/')[0];
        const holder = held.get(id)?.holder;
        return holder && current.get(holder.node) === holder.token ? holder.node : undefined;
      }),
    );
  }

  /** Waits until every instance is owned by one of the live nodes; returns the time it took (ms). */
  async waitAllOwned(timeoutMs: number, ids = this.instanceIds): Promise<number> {
    const started = performance.now();
    for (;;) {
      const live = new Set(this.nodes.map((n) => n.nodeId));
      const owners = await this.owners(ids).catch(() => ids.map(() => undefined));
      if (owners.every((o) => o !== undefined && live.has(o))) return performance.now() - started;
      if (performance.now() - started > timeoutMs) {
        throw new Error(
          `not all owned after ${timeoutMs} ms: ${owners.filter((o) => !o || !live.has(o)).length} missing`,
        );
      }
      await sleep(50);
    }
  }

  /** Waits until every instance is owned by its placement node among the live ones (handoffs done). */
  async waitSettled(timeoutMs: number): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const live = this.nodes.map((n) => n.nodeId);
      const owners = await this.owners();
      const off = this.instanceIds.flatMap((id, i) => {
        const placed = placeInstance(id, live);
        return owners[i] === placed ? [] : [`${owners[i] ?? 'nobody'} → ${placed}`];
      });
      if (off.length === 0) return;
      if (Date.now() > deadline) {
        const moves = [...new Set(off)].map((m) => `${m}: ${off.filter((o) => o === m).length}`);
        throw new Error(
          `cluster did not settle on placement: ${off.length} off it (owner → placement) ${moves.join(', ')}`,
        );
      }
      await sleep(100);
    }
  }

  /** Stale-epoch writes the store accepted (must be none). */
  check() {
    return staleWrites(readProbe(this.probeFile));
  }

  /** Moments where an old owner still held itself the owner after a newer one began (must be none). */
  checkOwners() {
    return twoOwners(readOwners(this.probeFile));
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.kill9()));
    this.nodes.length = 0;
    this.#watch.disconnect();
    await this.store.close();
    await this.backend.stop();
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}
