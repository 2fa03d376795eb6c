import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import type { ActorScope } from '../actors/actor-scope.js';
import type { ActorBehavior } from '../actors/instance-actor.js';
import type { Config } from '../config/config.js';
import { StartupError } from '../errors.js';
import { createRedisClients } from '../redis/redis-client.js';
import type { RedisClient } from '../redis/redis-client.js';
import { CredentialNews } from '../events/credential-news.js';
import { InstanceNews } from '../events/instance-news.js';
import { EventBus } from '../events/event-bus.js';
import type { EventEnvelope } from '../events/instance-events.js';
import type { ActorMetrics, CallMetrics } from '../metrics/metrics.js';
import type { Store } from '../store/store.js';
import { ActorHost } from './actor-host.js';
import { LocalLeaseManager } from './lease-manager.js';
import type { LeaseManager } from './lease-manager.js';
import { LocalMembership } from './membership.js';
import type { Membership, NodeInfo } from './membership.js';
import { placeInstance } from './placement.js';
import { FallbackRateLimiter, MemoryRateLimiter } from './rate-limiter.js';
import type { RateLimiter } from './rate-limiter.js';
import { Reconciler } from './reconciler.js';
import { RedisLeaseManager } from './redis-lease-manager.js';
import { LocalOwnerDirectory, RedisOwnerDirectory } from './owner-directory.js';
import type { OwnerDirectory } from './owner-directory.js';
import { RedisMembership } from './redis-membership.js';
import { RedisRateLimiter } from './redis-rate-limiter.js';
import { RedisTransport } from '../transport/redis-transport.js';
import { Router } from './router.js';
import { ClusterSingleton } from './singleton.js';
import type { SingletonRole } from './singleton.js';
import { LocalTransport } from '../transport/transport.js';
import type { Transport } from '../transport/transport.js';

export interface ClusterRuntimeDeps {
  nodeId: string;
  config: Pick<Config, 'redisUrls' | 'redisMode' | 'redisSentinelMaster' | 'redisConnectTimeoutMs' | 'cluster'>;
  store: Store;
  log: Logger;
  /** Where this node's HTTP listener answers; known only once it listens. */
  url: () => string;
  metrics?: ActorMetrics & CallMetrics;
}

/**
 * Everything that makes "exactly one owner" true, assembled for one node: in-process implementations in
 * embedded mode, Redis ones in cluster mode, one code path above them.
 */
export class ClusterRuntime {
  readonly host: ActorHost<ActorScope>;
  readonly router: Router;
  readonly membership: Membership;
  readonly leases: LeaseManager;
  /** Where each instance's owner runs (routing hints). */
  readonly directory: OwnerDirectory;
  readonly transport: Transport;
  readonly rateLimiter: RateLimiter;
  /** Instance events to every node (WebSocket fan-out). */
  readonly events: EventBus<EventEnvelope>;
  /** Token and account changes to every node (WebSocket revocation, reconciler kicks). */
  readonly credentials: CredentialNews;
  /** Instance record changes to every node (the edge's cached records). */
  readonly instanceNews: InstanceNews;
  readonly #reconciler: Reconciler;
  readonly #singletons: ClusterSingleton[] = [];
  readonly #redis: RedisClient[];
  #behavior: ((instanceId: string) => ActorBehavior<ActorScope>) | undefined;

  private constructor(
    private readonly deps: ClusterRuntimeDeps,
    redis: RedisClient[],
  ) {
    const { nodeId, config, store, log } = deps;
    const c = config.cluster;
    this.#redis = redis;
    const first = redis[0];
    if (first) {
      this.transport = new RedisTransport(first, log);
      this.leases = new RedisLeaseManager(redis, nodeId, c.leaseTtlMs, log);
      this.directory = new RedisOwnerDirectory(first);
      this.membership = new RedisMembership(
        first,
        this.transport,
        { nodeId, url: deps.url, actors: () => this.host.size, heartbeatMs: c.heartbeatMs, timeoutMs: c.nodeTimeoutMs },
        log,
      );
      const shared = new RedisRateLimiter(first, {
        batchMs: c.rateLimitBatchMs,
        nodes: () => this.membership.liveNodes().length,
      });
      this.rateLimiter = new FallbackRateLimiter(shared, new MemoryRateLimiter(), log);
    } else {
      this.transport = new LocalTransport();
      this.leases = new LocalLeaseManager(c.leaseTtlMs);
      this.directory = new LocalOwnerDirectory();
      this.membership = new LocalMembership(nodeId, deps.url, () => this.host.size);
      this.rateLimiter = new MemoryRateLimiter();
    }
    this.events = new EventBus(this.transport, log);
    this.credentials = new CredentialNews(this.transport, log);
    this.instanceNews = new InstanceNews(this.transport, log);
    this.host = new ActorHost({
      nodeId,
      store,
      leases: this.leases,
      directory: this.directory,
      behavior: (instanceId) => {
        if (!this.#behavior) throw new Error('the cluster runtime has not started');
        return this.#behavior(instanceId);
      },
      log,
      maxQueue: c.actorMaxQueue,
      safetyMarginMs: Math.min(250, Math.floor(c.leaseTtlMs / 10)),
      drainTimeoutMs: c.drainTimeoutMs,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });
    this.router = new Router({
      nodeId,
      host: this.host,
      directory: this.directory,
      membership: this.membership,
      transport: this.transport,
      log,
      ownerCacheMs: Math.min(1000, Math.floor(c.leaseTtlMs / 5)),
      retryDelayMs: 100,
      ...(deps.metrics ? { metrics: deps.metrics } : {}),
    });
    this.#reconciler = new Reconciler({
      nodeId,
      store,
      host: this.host,
      membership: this.membership,
      router: this.router,
      log,
      intervalMs: c.reconcileMs,
      movesPerWindow: c.handoffMoves,
      moveWindowMs: c.handoffWindowMs,
      idleMs: 60_000,
    });
  }

  /**
   * Connects to Redis as `REDIS_MODE` says (every independent master, the cluster, or the sentinels' master), retrying for REDIS_CONNECT_TIMEOUT_MS with one log line
   * per attempt; nothing runs until start().
   * @throws StartupError 69 when Redis stays unreachable
   */
  static async create(deps: ClusterRuntimeDeps): Promise<ClusterRuntime> {
    const hosts = deps.config.redisUrls.map((u) => u.replace(/\/\/[^@/]*@/, '//')).join(', ');
    const deadline = Date.now() + deps.config.redisConnectTimeoutMs;
    for (let attempt = 1; ; attempt++) {
      const { redisUrls: urls, redisMode: mode, redisSentinelMaster: sentinelMaster } = deps.config;
      const redis = urls.length ? createRedisClients({ mode, urls, sentinelMaster }) : [];
      for (const client of redis) client.on('error', (err) => deps.log.debug({ err }, 'redis connection error'));
      try {
        await Promise.all(redis.map((c) => c.connect()));
        return new ClusterRuntime(deps, redis);
      } catch (err) {
        for (const c of redis) c.disconnect();
        const cause = (err as Error).message;
        if (Date.now() >= deadline) throw new StartupError(`cannot connect to Redis (${hosts}): ${cause}`, 69);
        deps.log.warn({ attempt, hosts, cause }, 'Redis not reachable yet; retrying');
        await sleep(Math.min(2000, 250 * attempt));
      }
    }
  }

  /** The first Redis client (cluster mode), for the other Redis-backed parts of the node. */
  get redis(): RedisClient | undefined {
    return this.#redis[0];
  }

  get mode(): 'embedded' | 'cluster' {
    return this.#redis.length ? 'cluster' : 'embedded';
  }

  /**
   * Starts taking part in the cluster, running instances with `behavior`: given here rather than at
   * creation, because the behaviour is built from the runtime's own transport and event bus.
   */
  async start(behavior: (instanceId: string) => ActorBehavior<ActorScope>): Promise<void> {
    this.#behavior = behavior;
    await this.router.start();
    // The node lease first: nothing is taken over before this node can hold it.
    await this.host.start();
    await this.membership.start();
    this.#reconciler.start();
    for (const s of this.#singletons) s.start();
  }

  /**
   * A role that exactly one node runs at a time; start() begins competing for it. `create` gets the
   * singleton's `holding`, which the role checks before every side effect.
   */
  singleton(name: string, create: (holding: () => boolean) => SingletonRole): ClusterSingleton {
    const singleton: ClusterSingleton = new ClusterSingleton(
      name,
      this.leases,
      create(() => singleton.holding),
      this.deps.log,
    );
    this.#singletons.push(singleton);
    return singleton;
  }

  /** The live nodes, this one with its current actor count. */
  nodes(): NodeInfo[] {
    return this.membership
      .liveNodes()
      .map((n) => (n.nodeId === this.deps.nodeId ? { ...n, actors: this.host.size } : n));
  }

  /** Redis answers (health). */
  async ping(): Promise<void> {
    await Promise.all(this.#redis.map((c) => c.ping()));
  }

  /**
   * Graceful stop: leave the membership first (peers place this node's instances elsewhere from now
   * on, while it still serves them), hand every actor off (drain, stop, release, and tell the new
   * placement node to take it), then close the connections.
   */
  async stop(): Promise<void> {
    this.#reconciler.stop();
    for (const s of this.#singletons) await s.stop();
    await this.membership.stop();
    const live = this.membership
      .liveNodes()
      .map((n) => n.nodeId)
      .filter((n) => n !== this.deps.nodeId);
    const ids = this.host.ids();
    await this.host.stopAll('shutdown');
    if (live.length) {
      await Promise.all(ids.map((id) => this.router.handOff(id, placeInstance(id, live)!).catch(() => undefined)));
    }
    await this.router.stop();
    await this.rateLimiter.close();
    await this.leases.close();
    await this.transport.close();
    await Promise.all(this.#redis.map((c) => c.quit().catch(() => c.disconnect())));
  }
}
