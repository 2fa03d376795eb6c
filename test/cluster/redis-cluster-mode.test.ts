import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';
import type { Cluster } from 'ioredis';
import { pino } from 'pino';
import type { NodeInfo } from '../../src/cluster/membership.js';
import { RedisOwnerDirectory } from '../../src/cluster/owner-directory.js';
import { RedisMembership } from '../../src/cluster/redis-membership.js';
import { RedisRateLimiter } from '../../src/cluster/redis-rate-limiter.js';
import { keys } from '../../src/redis/keys.js';
import { runScript } from '../../src/redis/scripts.js';
import { RedisTransport } from '../../src/transport/redis-transport.js';
import { connectCluster, startRedisCluster } from '../helpers/redis-cluster.js';
import type { RedisClusterServer } from '../helpers/redis-cluster.js';
import { until } from '../helpers/until.js';

const log = pino({ level: 'silent' });
const LUA_DIR = join(dirname(fileURLToPath(import.meta.url)), '../../src/redis/lua');

let seq = 0;
const unique = (what: string) => `${what}-${++seq}-${Math.random().toString(36).slice(2, 8)}`;

/**
 * The Redis-backed coordination parts over a real Redis Cluster (REDIS_MODE=cluster): what differs from one
 * server is that a script, a MULTI or an MGET must keep to one slot, and that pub/sub is sharded.
 */
describe('Redis coordination on a Redis Cluster (3 masters, 3 replicas)', function () {
  this.timeout(20_000);
  let cluster: RedisClusterServer;
  const clients: Cluster[] = [];
  const cleanups: (() => Promise<void>)[] = [];

  async function client(): Promise<Cluster> {
    const c = await connectCluster(cluster);
    clients.push(c);
    return c;
  }

  async function transport(): Promise<RedisTransport> {
    const t = new RedisTransport(await client(), log);
    cleanups.push(() => t.close());
    return t;
  }

  before(async () => {
    cluster = await startRedisCluster();
  });
  afterEach(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });
  after(async () => {
    for (const c of clients) c.disconnect();
    await cluster?.stop();
  });

  describe('Lua scripts: the keys of each share a slot', () => {
    const instance = unique('inst');
    /** Every script with the keys the service passes it, and arguments it accepts. */
    const CALLS: Record<string, { keys: string[]; args: (string | number)[] }> = {
      forgetOwner: { keys: [keys.owner(instance)], args: ['node-a'] },
      hitRateLimit: { keys: [keys.rate(unique('bucket'))], args: [60_000] },
      runLease: { keys: [keys.lease(unique('node:n')), keys.incarnation()], args: ['acquire', 'tok', 1000, 0] },
    };

    it('names every script of src/redis/lua', () => {
      const scripts = readdirSync(LUA_DIR)
        .filter((f) => f.endsWith('.lua'))
        .map((f) => f.split('-')[0]);
      expect(Object.keys(CALLS).sort()).to.deep.equal(scripts.sort());
    });

    for (const [script, call] of Object.entries(CALLS)) {
      it(`${script} runs on the cluster (one slot: ${call.keys.join(', ')})`, async () => {
        const c = await client();
        const slots = await Promise.all(call.keys.map((k) => c.cluster('KEYSLOT', k)));
        expect(new Set(slots).size).to.equal(1);
        // A script whose keys spanned slots would be refused (CROSSSLOT) before it ran.
        await runScript(c, script, call.keys, call.args);
      });
    }
  });

  describe('RedisTransport (sharded pub/sub)', () => {
    it('delivers over SPUBLISH/SSUBSCRIBE on channels of every master, with receiver counts', async () => {
      const sender = await transport();
      const a = await transport();
      const b = await transport();
      // Enough channels that each master serves some of them.
      const channels = Array.from({ length: 12 }, () => unique('chan'));
      const got: string[] = [];
      for (const ch of channels) {
        await a.subscribe(ch, (m) => got.push(`a:${m}`));
        await b.subscribe(ch, (m) => got.push(`b:${m}`));
      }
      const counts = await Promise.all(channels.map((ch, i) => sender.publish(ch, String(i))));
      expect(counts).to.deep.equal(channels.map(() => 2));
      await until(() => got.length === 24, 'every delivery', 3000, 5);
      expect(got.filter((m) => m.startsWith('a:')).sort()).to.deep.equal(channels.map((_, i) => `a:${i}`).sort());
      expect(await sender.publish(unique('nobody'), 'x')).to.equal(0);
    });

    it('stops delivery after unsubscribe, only for the handler unsubscribed', async () => {
      const sender = await transport();
      const receiver = await transport();
      const channel = unique('unsub');
      const got: string[] = [];
      const off1 = await receiver.subscribe(channel, (m) => got.push(`1:${m}`));
      const off2 = await receiver.subscribe(channel, (m) => got.push(`2:${m}`));
      await off1();
      expect(await sender.publish(channel, 'x')).to.equal(1);
      await until(() => got.length === 1, 'the second handler', 2000, 5);
      await off2();
      expect(await sender.publish(channel, 'y')).to.equal(0);
      expect(got).to.deep.equal(['2:x']);
    });
  });

  describe('RedisOwnerDirectory (one key per instance, spread over the slots)', () => {
    it('records, looks up and forgets hints of many instances at once', async () => {
      const c = await client();
      const directory = new RedisOwnerDirectory(c);
      const ids = Array.from({ length: 50 }, () => unique('inst'));
      const slots = new Set(await Promise.all(ids.map((id) => c.cluster('KEYSLOT', keys.owner(id)))));
      expect(slots.size).to.be.greaterThan(10);
      await directory.record(ids, 'node-a');
      expect(await directory.lookup(ids)).to.deep.equal(ids.map(() => 'node-a'));
      await directory.forget(ids[0]!, 'node-b');
      await directory.forget(ids[1]!, 'node-a');
      const after = await directory.lookup(ids.slice(0, 3));
      expect(after).to.deep.equal(['node-a', undefined, 'node-a']);
    });
  });

  describe('RedisMembership', () => {
    it('two members see each other; one that stops is gone for the other at once', async () => {
      const ids = (nodes: NodeInfo[]) => nodes.map((n) => n.nodeId).filter((id) => id.startsWith('cm-'));
      const member = async (nodeId: string) =>
        new RedisMembership(
          await client(),
          await transport(),
          { nodeId, url: () => `http://${nodeId}.test`, actors: () => 1, heartbeatMs: 100, timeoutMs: 300 },
          log,
        );
      const a = await member('cm-a');
      const b = await member('cm-b');
      await a.start();
      await b.start();
      cleanups.push(() => a.stop());
      await until(() => ids(a.liveNodes()).length === 2, 'a to see b', 2000, 5);
      expect(ids(a.liveNodes())).to.deep.equal(['cm-a', 'cm-b']);
      await b.stop();
      await until(() => ids(a.liveNodes()).length === 1, 'a to drop b', 1000, 5);
      expect(ids(a.liveNodes())).to.deep.equal(['cm-a']);
    });
  });

  describe('RedisRateLimiter', () => {
    it('shares one bucket between two nodes', async () => {
      const one = new RedisRateLimiter(await client());
      const two = new RedisRateLimiter(await client());
      const bucket = unique('bucket');
      const results = [];
      for (let i = 0; i < 6; i++) results.push(await (i % 2 ? two : one).hit(bucket, 5, 60_000));
      expect(results.map((r) => r.allowed)).to.deep.equal([true, true, true, true, true, false]);
      await one.close();
      await two.close();
    });
  });
});
