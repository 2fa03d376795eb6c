import { expect } from 'chai';
import { placeInstance } from '../../src/cluster/placement.js';
import { ClusterFixture, TEST_TTL_MS, sleep } from './cluster-fixture.js';
import type { NodeProcess } from './node-process.js';
import { readProbe } from './probe-checker.js';
import { startRedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const INSTANCES = 24;

/** A small seeded PRNG (mulberry32), so that a failing random schedule can be replayed. */
function prng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

describe('cluster: exactly one owner across node processes (real Redis, kill -9, SIGSTOP)', function () {
  this.timeout(180_000);
  let c: ClusterFixture;

  before(async function () {
    this.timeout(90_000);
    c = await ClusterFixture.start(3, {
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '6',
      TEST_PROBE_WRITE_MS: '200',
    });
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

  /** The live node owning the most instances. */
  async function busiest(): Promise<NodeProcess> {
    const owners = await c.owners();
    const counts = new Map<string, number>();
    for (const o of owners) if (o) counts.set(o, (counts.get(o) ?? 0) + 1);
    const [top] = [...counts.entries()].sort((a, b) => b[1] - a[1]);
    return c.nodes.find((n) => n.nodeId === top![0])!;
  }

  async function nameOf(id: string): Promise<string> {
    return (await c.store.instances.findById(id))!.name;
  }

  it('routes a request sent to any node to the owner, which answers', async () => {
    const name = await nameOf(c.instanceIds[0]!);
    const answers = await Promise.all(c.nodes.map((n) => c.probe(n, name, 'describe')));
    for (const a of answers) expect(a.status, JSON.stringify(a.body)).to.equal(200);
    const owners = new Set(answers.map((a) => `${a.body.owner.nodeId}@${a.body.owner.epoch}`));
    expect(owners.size).to.equal(1);
    const ownerId = answers[0]!.body.owner.nodeId as string;
    answers.forEach((a, i) => expect(a.body.servedBy).to.equal(c.nodes[i]!.nodeId === ownerId ? 'local' : 'routed'));
    const [recorded] = await c.owners([c.instanceIds[0]!]);
    expect(recorded).to.equal(ownerId);
  });

  it('shares one rate-limit bucket per token across nodes', async () => {
    // The creation bucket (6 a minute in this cluster) is small enough to exhaust across three nodes.
    const remaining: number[] = [];
    for (let i = 0; i < 6; i++) {
      const res = await c.nodes[i % c.nodes.length]!.api.post(
        '/api/instance/new',
        { name: `rl-${i}` },
        { token: c.accountToken },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(201);
      remaining.push(Number(res.headers.get('x-ratelimit-remaining')));
    }
    expect(remaining).to.deep.equal([5, 4, 3, 2, 1, 0]);
    for (const node of c.nodes) {
      const over = await node.api.post('/api/instance/new', { name: 'rl-over' }, { token: c.accountToken });
      expect(over.status).to.equal(429);
      expect(over.body.error.message).to.equal('Rate limit exceeded. Try again later.');
      expect(over.headers.get('x-ratelimit-limit')).to.equal('6');
    }
  });

  it('kill -9 of a node: all its instances are owned again within TTL + 2 s', async () => {
    const victim = await busiest();
    const theirs = (await c.owners()).filter((o) => o === victim.nodeId).length;
    expect(theirs).to.be.greaterThan(0);
    await victim.kill9();
    c.remove(victim);
    const took = await c.waitAllOwned(TEST_TTL_MS + 2000);
    expect(took).to.be.at.most(TEST_TTL_MS + 2000);
    await c.addNode();
    await c.waitForMembers(3);
  });

  it('SIGSTOP of an owner for 2 × TTL: after SIGCONT its writes are refused and it drops its actors', async () => {
    // The previous test's joiner may still be taking instances over: pause an owner whose actors all run
    // (an owner key is recorded when the lease is taken, before the actor has activated and written).
    await c.waitSettled(20_000);
    const settled = await c.owners();
    await until(
      () => {
        const written = new Set(readProbe(c.probeFile).map((r) => `${r.node}/${r.instance}`));
        return c.instanceIds.every((id, i) => written.has(`${settled[i]}/${id}`));
      },
      'every owner to write for its instances',
      10_000,
    );
    const victim = await busiest();
    const owners = await c.owners();
    const theirs = c.instanceIds.filter((_, i) => owners[i] === victim.nodeId);
    expect(theirs.length).to.be.greaterThan(0);
    const pausedAt = performance.timeOrigin + performance.now();
    victim.pause();
    c.remove(victim);
    let resumedAt = 0;
    try {
      await sleep(2 * TEST_TTL_MS);
      await c.waitAllOwned(TEST_TTL_MS + 2000);
    } finally {
      resumedAt = performance.timeOrigin + performance.now();
      victim.resume();
      c.nodes.push(victim);
    }
    await sleep(1500);
    const records = readProbe(c.probeFile);
    const after = records.filter((r) => r.start > resumedAt);
    // The epochs it held when paused: none of its writes under them may be accepted after SIGCONT (it may
    // own an instance again later, when placement gives it back, but only under a newer epoch).
    const held = new Map<string, number>();
    for (const r of records) {
      if (r.node === victim.nodeId && r.end < resumedAt && theirs.includes(r.instance)) {
        held.set(r.instance, Math.max(held.get(r.instance) ?? 0, r.epoch));
      }
    }
    expect(held.size, 'writes of the owner before the pause').to.be.greaterThan(0);
    const stale = after.filter((r) => r.node === victim.nodeId && r.epoch <= (held.get(r.instance) ?? -1));
    expect(stale, 'writes under its old epochs accepted after SIGCONT').to.deep.equal([]);
    // Its instances lived on elsewhere while it was paused: the new owners' writes were accepted.
    for (const id of theirs) {
      expect(
        records.some((r) => r.instance === id && r.node !== victim.nodeId && r.start > pausedAt),
        `accepted writes of the new owner of ${id}`,
      ).to.equal(true);
    }
    expect(victim.output).to.match(/actor stopped itself/);
    await c.waitAllOwned(10_000);
  });

  it('Redis restarted (every lease lost): no instance ends with two owners; the holders keep theirs', async () => {
    const describe = async (id: string, via: NodeProcess) => {
      const res = await c.probe(via, await nameOf(id), 'describe');
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      return res.body.owner as { nodeId: string; epoch: number };
    };
    const before = await Promise.all(c.instanceIds.map((id) => describe(id, c.nodes[0]!)));
    const restarting = performance.now();
    await c.redis.restart();
    const restartMs = performance.now() - restarting;
    await c.waitAllOwned(15_000);
    // Whoever reclaimed first may hand an instance on to its placed node: compare once placement holds.
    await c.waitSettled(15_000);
    const owners = await c.owners();
    let kept = 0;
    for (const [i, id] of c.instanceIds.entries()) {
      // Every node routes to one owner, the one the store records; a move meant a newer epoch.
      const seen = await Promise.all(c.nodes.map((n) => describe(id, n)));
      expect(new Set(seen.map((o) => `${o.nodeId}@${o.epoch}`)).size, `owners of ${id}`).to.equal(1);
      expect(seen[0]!.nodeId).to.equal(owners[i]);
      if (seen[0]!.nodeId === before[i]!.nodeId && seen[0]!.epoch === before[i]!.epoch) kept++;
      else expect(seen[0]!.epoch, `epoch of ${id}`).to.be.greaterThan(before[i]!.epoch);
    }
    // The nodes wrote their leases back within their validity: a quick Redis restart moves no instance.
    if (restartMs < TEST_TTL_MS / 2) {
      expect(kept, `kept after a ${Math.round(restartMs)} ms restart`).to.equal(c.instanceIds.length);
    }
  });

  // How many move (about 1/N) is rendezvous hashing's property, measured on 20,000 ids in placement.test.ts;
  // here: the ones placement gives the joiner move, and no other.
  it('a node joins: the instances placement gives it move to it, and only those', async () => {
    await c.waitSettled(20_000);
    const before = await c.owners();
    const current = c.nodes.map((n) => n.nodeId);
    // With a few dozen random instance ids a joiner can win none; pick a name that wins some, so a move is seen.
    const wins = (id: string) => c.instanceIds.filter((i) => placeInstance(i, [...current, id]) === id).length;
    const name = Array.from({ length: 50 }, (_, k) => `joiner-${k}`).find((id) => wins(id) > 0)!;
    const joiner = await c.addNode({}, name);
    await c.waitForMembers(c.nodes.length);
    const live = c.nodes.map((n) => n.nodeId);
    const expected = c.instanceIds.filter((id) => placeInstance(id, live) === joiner.nodeId);
    expect(expected).to.not.be.empty;
    const deadline = Date.now() + 15_000;
    let after = await c.owners();
    while (Date.now() < deadline && after.filter((o) => o === joiner.nodeId).length < expected.length) {
      await sleep(100);
      after = await c.owners();
    }
    const moved = c.instanceIds.filter((_, i) => before[i] !== after[i]);
    expect(moved.sort()).to.deep.equal([...expected].sort());
  });

  it('SIGTERM: actors are handed off with no failed request', async () => {
    const victim = await busiest();
    const owners = await c.owners();
    const names = await Promise.all(c.instanceIds.filter((_, i) => owners[i] === victim.nodeId).map(nameOf));
    const front = c.other(victim);
    const statuses: (number | string)[] = [];
    let running = true;
    // A request that fails without an answer is recorded, not thrown: the test must still stop the load
    // and leave the cluster whole for the next test.
    const load = (async () => {
      for (let i = 0; running; i++) {
        // Owned writes, not reads: the handoff must neither refuse nor repeat a side effect.
        const res = await c
          .probe(front, names[i % names.length]!, i % 2 === 0 ? 'write' : 'describe')
          .catch((err: Error) => ({ status: `${err.message}: ${String(err.cause)}` }));
        statuses.push(res.status);
      }
    })();
    await sleep(300);
    expect(await victim.terminate()).to.equal(0);
    c.remove(victim);
    await c.waitAllOwned(TEST_TTL_MS + 2000);
    await sleep(300);
    running = false;
    await load;
    expect(statuses.length).to.be.greaterThan(5);
    expect(statuses.filter((s) => s !== 200)).to.deep.equal([]);
    await c.addNode();
    await c.waitForMembers(c.nodes.length);
  });

  // A killed primary restarted from its disk serves as a master until the sentinels demote it; nodes that
  // reach it see none of the other nodes' leases. The fault harness's Sentinel run saw two nodes take the
  // same instances from each other for seconds, acting on both sides between claims.
  it('a node that reaches only a second Redis master takes nothing that live nodes still hold', async () => {
    await c.waitSettled(20_000);
    const before = await c.owners();
    const second = await startRedisServer();
    // Alone on its master: placement gives it every instance, and their holders' leases are missing there.
    const stray = await c.addNode({ REDIS_URL: second.url }, 'stray');
    try {
      const takenByStray = async () =>
        [...(await c.store.instances.ownership(c.instanceIds)).values()].filter((o) => o.holder?.node === 'stray');
      // Once its master's incarnation is old enough, the stray node either waits or takes (the defect).
      await until(
        async () => stray.output.includes('the store heard from it within a TTL') || (await takenByStray()).length > 0,
        'the stray node judges the holders',
        15_000,
      );
      await sleep(2 * TEST_TTL_MS);
      expect(await takenByStray()).to.deep.equal([]);
      expect(await c.owners()).to.deep.equal(before);
    } finally {
      await stray.kill9();
      c.remove(stray);
      await second.stop();
    }
  });

  it('holds under a seeded random schedule of faults', async () => {
    const seed = 20261122;
    const random = prng(seed);
    const faults = ['kill9', 'pause', 'redis', 'sigterm', 'join'] as const;
    for (let round = 0; round < 4; round++) {
      const fault = faults[Math.floor(random() * faults.length)]!;
      const victim = c.nodes[Math.floor(random() * c.nodes.length)]!;
      if (fault === 'kill9' || fault === 'sigterm') {
        if (fault === 'kill9') await victim.kill9();
        else expect(await victim.terminate()).to.equal(0);
        c.remove(victim);
        await c.waitAllOwned(TEST_TTL_MS + 3000);
        await c.addNode();
      } else if (fault === 'pause') {
        victim.pause();
        await sleep(1.5 * TEST_TTL_MS);
        victim.resume();
      } else if (fault === 'redis') {
        await c.redis.restart();
      } else if (c.nodes.length < 5) {
        await c.addNode();
      }
      await c.waitForMembers(c.nodes.length, 15_000);
      await c.waitAllOwned(15_000);
      expect(c.check(), `stale writes after round ${round} (${fault}, seed ${seed})`).to.deep.equal([]);
      expect(c.checkOwners(), `two owners after round ${round} (${fault}, seed ${seed})`).to.deep.equal([]);
    }
  });
});
