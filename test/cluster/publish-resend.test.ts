import { createServer, connect } from 'node:net';
import type { AddressInfo, Server, Socket } from 'node:net';
import { expect } from 'chai';
import { Redis } from 'ioredis';
import { pino } from 'pino';
import type { ActorHost } from '../../src/cluster/actor-host.js';
import type { Membership, NodeInfo } from '../../src/cluster/membership.js';
import { Router } from '../../src/cluster/router.js';
import { EventBus } from '../../src/events/event-bus.js';
import { RedisTransport } from '../../src/transport/redis-transport.js';
import { startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

const log = pino({ level: 'silent' });
const node = (nodeId: string) => ({ nodeId }) as NodeInfo;
const membership = { onChange: () => undefined, liveNodes: () => [node('a'), node('b')] } as unknown as Membership;

/**
 * A TCP proxy to Redis that breaks the first connection carrying a PUBLISH once the command has passed:
 * Redis delivers it, its reply never comes back.
 */
async function publishCuttingProxy(redisPort: number): Promise<{ url: string; server: Server }> {
  let cut = false;
  const server = createServer((client: Socket) => {
    const upstream = connect(redisPort, '127.0.0.1');
    let swallowing = false;
    client.on('data', (d: Buffer) => {
      upstream.write(d);
      if (!cut && /publish/i.test(d.toString())) {
        cut = swallowing = true;
        setTimeout(() => {
          client.destroy();
          upstream.destroy();
        }, 100);
      }
    });
    upstream.on('data', (d: Buffer) => {
      if (!swallowing) client.write(d);
    });
    client.on('error', () => undefined);
    upstream.on('error', () => undefined);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return { url: `redis://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describe('cluster: a PUBLISH that ioredis sends twice takes effect once', () => {
  let redis: RedisServer;
  const closers: (() => Promise<unknown> | void)[] = [];

  before(async () => {
    redis = await startRedisServer();
  });

  after(async () => {
    for (const close of closers.reverse()) await close();
    await redis?.stop();
  });

  /** A started router of node `nodeId` (whose instance b owns) on Redis at `url`, with the cluster runtime's ioredis options. */
  async function routerOn(nodeId: string, url: string, host: { get: (id: string) => unknown }): Promise<Router> {
    const connection = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true });
    connection.on('error', () => undefined);
    await connection.connect();
    const transport = new RedisTransport(connection, log);
    const router = new Router({
      nodeId,
      host: host as unknown as ActorHost,
      directory: { lookup: async () => ['b'], record: async () => undefined, forget: async () => undefined },
      membership,
      transport,
      log,
      ownerCacheMs: 1000,
      retryDelayMs: 1,
    });
    await router.start();
    closers.push(
      () => transport.close(),
      () => connection.disconnect(),
    );
    return router;
  }

  it('the connection breaks after Redis delivered the call: ioredis sends it again, the owner runs it once', async () => {
    let runs = 0;
    const actor = {
      call: async () => {
        runs++;
        return { instanceId: 'inst-1', nodeId: 'b', epoch: 1, state: 'active' };
      },
    };
    // The owner, b, on Redis directly; the front end, a, through the proxy.
    await routerOn('b', redis.url, { get: () => actor });
    const proxy = await publishCuttingProxy(Number(new URL(redis.url).port));
    closers.push(() => new Promise((resolve) => proxy.server.close(resolve)));
    const front = await routerOn('a', proxy.url, { get: () => undefined });

    const result = await front.call('inst-1', 'describe', {}, 5000);
    expect(result).to.include({ nodeId: 'b' });
    // ioredis's second PUBLISH arrives after the first run's reply; give it time to be (not) served.
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(runs).to.equal(1);
  });

  it('an instance event whose PUBLISH is sent twice reaches a subscriber once', async () => {
    const subscriberRedis = new Redis(redis.url, { lazyConnect: true });
    await subscriberRedis.connect();
    const subscriberTransport = new RedisTransport(subscriberRedis, log);
    closers.push(
      () => subscriberTransport.close(),
      () => subscriberRedis.disconnect(),
    );
    const got: unknown[] = [];
    await new EventBus<{ event: string }>(subscriberTransport, log).subscribe('inst-1', (e) => got.push(e));

    const proxy = await publishCuttingProxy(Number(new URL(redis.url).port));
    closers.push(() => new Promise((resolve) => proxy.server.close(resolve)));
    const publisherRedis = new Redis(proxy.url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      lazyConnect: true,
    });
    publisherRedis.on('error', () => undefined);
    await publisherRedis.connect();
    const publisherTransport = new RedisTransport(publisherRedis, log);
    closers.push(
      () => publisherTransport.close(),
      () => publisherRedis.disconnect(),
    );

    await new EventBus<{ event: string }>(publisherTransport, log).publish('inst-1', { event: 'message.exchange' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(got).to.deep.equal([{ event: 'message.exchange' }]);
  });
});
