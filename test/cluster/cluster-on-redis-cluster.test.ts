import { expect } from 'chai';
import { keys } from '../../src/redis/keys.js';
import type { RedisClusterServer } from '../helpers/redis-cluster.js';
import { REDIS_CLUSTER } from '../helpers/redis-kinds.js';
import { ClusterFixture, TEST_TTL_MS } from './cluster-fixture.js';

const INSTANCES = 12;

/**
 * Node processes on a Redis Cluster (REDIS_MODE=cluster): ownership, routed calls over sharded pub/sub
 * and a shared rate bucket, then the failover of the master that holds the leases.
 */
describe('cluster: node processes on a Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let redis: RedisClusterServer | undefined;

  before(async function () {
    this.timeout(90_000);
    c = await ClusterFixture.start(
      2,
      { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '4', TEST_PROBE_WRITE_MS: '200' },
      REDIS_CLUSTER,
    );
    redis = c.backend.cluster;
    await c.seed(INSTANCES);
    await c.waitAllOwned(10_000);
  });

  after(async () => {
    await c?.stop();
  });

  afterEach(() => {
    expect(c.check(), 'accepted stale-epoch writes').to.deep.equal([]);
    expect(c.checkOwners(), 'two owners at once').to.deep.equal([]);
  });

  async function nameOf(id: string): Promise<string> {
    return (await c.store.instances.findById(id))!.name;
  }

  it('routes a request sent to either node to the owner, which answers', async () => {
    for (const id of c.instanceIds.slice(0, 4)) {
      const answers = await Promise.all(c.nodes.map(async (n) => c.probe(n, await nameOf(id), 'describe')));
      for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
      const owner = answers[0]!.body.owner.nodeId as string;
      expect(answers.map((a) => a.body.owner.nodeId)).to.deep.equal([owner, owner]);
      answers.forEach((a, i) => expect(a.body.servedBy).to.equal(c.nodes[i]!.nodeId === owner ? 'local' : 'routed'));
    }
  });

  it('shares one rate-limit bucket per token across nodes', async () => {
    const remaining: number[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await c.nodes[i % 2]!.api.post('/api/instance/new', { name: `rl-${i}` }, { token: c.accountToken });
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).to.deep.equal([3, 2, 1, 0]);
    const over = await c.nodes[1]!.api.post('/api/instance/new', { name: 'rl-over' }, { token: c.accountToken });
    expect(over.status).to.equal(429);
  });

  it('kill -9 of a node: its instances are owned again within TTL + 2 s', async () => {
    const victim = c.nodes[0]!;
    await victim.kill9();
    c.remove(victim);
    const took = await c.waitAllOwned(TEST_TTL_MS + 2000);
    expect(took).to.be.at.most(TEST_TTL_MS + 2000);
    await c.addNode();
    await c.waitForMembers(2);
  });

  it('kill -9 of the master holding the leases: its replica is promoted, no instance gets two owners, all stay owned', async () => {
    const master = await redis!.masterOf(keys.incarnation());
    await master.kill9();
    // The promoted replica is a new incarnation: missing leases are waited out, never taken early.
    await c.waitAllOwned(30_000);
    const name = await nameOf(c.instanceIds[0]!);
    const answers = await Promise.all(c.nodes.map((n) => c.probe(n, name, 'write')));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    await master.restart();
  });
});
