import { expect } from 'chai';
import { nodeResource } from '../../src/cluster/lease-manager.js';
import { keys } from '../../src/redis/keys.js';
import type { RedisClient } from '../../src/redis/redis-client.js';
import { REDIS_SENTINEL } from '../helpers/redis-kinds.js';
import { connectRedis } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';
import { ClusterFixture, TEST_TTL_MS, sleep } from './cluster-fixture.js';

const INSTANCES = 8;

/**
 * Node processes on a Redis followed through its sentinels (REDIS_MODE=sentinel), then a forced failover.
 * A promoted replica may lack the old master's last writes: here a node's lease is deleted on it, as if
 * never replicated. The lease script sees a new incarnation (another run id), so no node treats the
 * missing lease as expired while its holder may still act; the holder writes it back and keeps everything.
 */
describe('cluster: node processes on Redis Sentinel (a master, a replica, three sentinels)', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let watch: RedisClient;

  before(async function () {
    this.timeout(90_000);
    c = await ClusterFixture.start(2, { RATE_LIMIT_PER_MINUTE: '100000', TEST_PROBE_WRITE_MS: '200' }, REDIS_SENTINEL);
    watch = await c.backend.connect();
    await c.seed(INSTANCES);
    await c.waitAllOwned(10_000);
  });

  after(async () => {
    watch?.disconnect();
    await c?.stop();
  });

  afterEach(() => {
    expect(c.check(), 'accepted stale-epoch writes').to.deep.equal([]);
    expect(c.checkOwners(), 'two owners at once').to.deep.equal([]);
  });

  const count = (owners: (string | undefined)[], node: string) => owners.filter((o) => o === node).length;

  async function nameOf(id: string): Promise<string> {
    return (await c.store.instances.findById(id))!.name;
  }

  it('routes a request sent to either node to the owner, which answers', async () => {
    const name = await nameOf(c.instanceIds[0]!);
    const answers = await Promise.all(c.nodes.map((n) => c.probe(n, name, 'describe')));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    expect(new Set(answers.map((a) => a.body.owner.nodeId)).size).to.equal(1);
  });

  it('SENTINEL FAILOVER that loses a node lease: the holder keeps its instances, nobody takes them early', async () => {
    const sentinel = c.backend.sentinel!;
    const before = await c.owners();
    // The node owning the most loses its lease.
    const victim = c.nodes.map((n) => n.nodeId).sort((x, y) => count(before, y) - count(before, x))[0]!;
    const theirs = c.instanceIds.filter((_, i) => before[i] === victim);
    expect(theirs.length, 'the node whose lease is lost owns something').to.be.greaterThan(0);
    const promoted = await sentinel.failover();
    // Straight on the promoted master: the lease as if its last write had not been replicated.
    const direct = await connectRedis(promoted.url);
    try {
      await direct.del(keys.lease(nodeResource(victim)));
      const runId = /run_id:(\w+)/.exec(await direct.info('server'))?.[1];
      // The first lease operation on the promoted master records its incarnation.
      await until(
        async () => (await direct.get(keys.incarnation()))?.startsWith(`${runId}:`),
        'the new incarnation recorded',
        10_000,
        50,
      );
      // Its holder writes the lease back within its validity.
      await until(
        async () => (await direct.exists(keys.lease(nodeResource(victim)))) === 1,
        'the lease back',
        10_000,
        50,
      );
    } finally {
      direct.disconnect();
    }
    // Past a few TTLs nothing moved: the holder kept its instances, nobody took them meanwhile.
    await sleep(3 * TEST_TTL_MS);
    const after = await c.owners();
    expect(after).to.deep.equal(before);
    for (const node of c.nodes) {
      const res = await c.probe(node, await nameOf(theirs[0]!), 'write');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
  });
});
