import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { pino } from 'pino';
import { RedisTransport } from '../../src/transport/redis-transport.js';
import { LocalTransport } from '../../src/transport/transport.js';
import type { Transport } from '../../src/transport/transport.js';
import { EventBus } from '../../src/events/event-bus.js';
import { channels } from '../../src/redis/keys.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';
import { until } from '../helpers/until.js';

const log = pino({ level: 'silent' });
type Ev = { event: string; n: number };

function collect(bus: EventBus<Ev>, instanceId: string) {
  const got: Ev[] = [];
  return { got, ready: bus.subscribe(instanceId, (e) => got.push(e)) };
}

describe('EventBus', () => {
  describe('over Redis: an event emitted on one node reaches subscribers on the others', () => {
    let redis: RedisServer;
    const transports: Transport[] = [];
    const clients: Redis[] = [];

    before(async () => {
      redis = await startRedisServer();
      for (let i = 0; i < 3; i++) {
        clients.push(await connectRedis(redis.url));
        transports.push(new RedisTransport(clients[i]!, log));
      }
    });

    after(async () => {
      for (const t of transports) await t.close();
      for (const c of clients) c.disconnect();
      await redis.stop();
    });

    it('delivers to every node that subscribed to the instance, and to no other instance', async () => {
      const [a, b, c] = transports.map((t) => new EventBus<Ev>(t, log));
      const onB = collect(b!, 'inst-1');
      const onC = collect(c!, 'inst-1');
      const otherInstance = collect(c!, 'inst-2');
      await Promise.all([onB.ready, onC.ready, otherInstance.ready]);
      expect(await a!.publish('inst-1', { event: 'message.exchange', n: 1 })).to.equal(2);
      await until(() => onB.got.length === 1 && onC.got.length === 1, 'delivery', 2000);
      expect(onB.got).to.deep.equal([{ event: 'message.exchange', n: 1 }]);
      expect(onC.got).to.deep.equal([{ event: 'message.exchange', n: 1 }]);
      expect(otherInstance.got).to.deep.equal([]);
    });

    it('stops delivering after unsubscribe', async () => {
      const [a, b] = transports.map((t) => new EventBus<Ev>(t, log));
      const onB = collect(b!, 'inst-3');
      const unsubscribe = await onB.ready;
      await unsubscribe();
      expect(await a!.publish('inst-3', { event: 'x', n: 2 })).to.equal(0);
    });
  });

  it('hands an event over once when its message arrives twice; a message without busId (an older node) as it comes', async () => {
    const transport = new LocalTransport();
    const sub = collect(new EventBus<Ev>(transport, log), 'i');
    await sub.ready;
    const twice = JSON.stringify({ busId: 'node-a:1', event: 'e', n: 1 });
    await transport.publish(channels.events('i'), twice);
    await transport.publish(channels.events('i'), twice);
    await transport.publish(channels.events('i'), JSON.stringify({ busId: 'node-a:2', event: 'e', n: 2 }));
    await transport.publish(channels.events('i'), JSON.stringify({ event: 'old', n: 3 }));
    await transport.publish(channels.events('i'), JSON.stringify({ event: 'old', n: 3 }));
    await until(() => sub.got.length === 4, 'delivery', 2000);
    await new Promise((r) => setTimeout(r, 20));
    expect(sub.got).to.deep.equal([
      { event: 'e', n: 1 },
      { event: 'e', n: 2 },
      { event: 'old', n: 3 },
      { event: 'old', n: 3 },
    ]);
  });

  it('works in-process (embedded mode) with the same contract', async () => {
    const bus = new EventBus<Ev>(new LocalTransport(), log);
    const sub = collect(bus, 'i');
    await sub.ready;
    expect(await bus.publish('i', { event: 'e', n: 3 })).to.equal(1);
    await until(() => sub.got.length === 1, 'delivery', 2000);
    expect(sub.got).to.deep.equal([{ event: 'e', n: 3 }]);
  });
});
