import { expect } from 'chai';
import { pino } from 'pino';
import type { ActorHost } from '../../src/cluster/actor-host.js';
import type { LeaseManager } from '../../src/cluster/lease-manager.js';
import type { Membership, NodeInfo } from '../../src/cluster/membership.js';
import { Router } from '../../src/cluster/router.js';
import type { Transport } from '../../src/cluster/transport.js';

const node = (nodeId: string) => ({ nodeId }) as NodeInfo;

describe('Router: a reply that fails while its call is still being published', () => {
  it('does not leave an unhandled rejection (the owner node leaves mid-publish): the call fails, the process lives', async () => {
    let changed: ((nodes: NodeInfo[]) => void) | undefined;
    const membership = {
      onChange: (listener: (nodes: NodeInfo[]) => void) => (changed = listener),
      liveNodes: () => [node('a'), node('b')],
      refresh: async () => [node('a'), node('b')],
    } as unknown as Membership;
    const publishes: (() => void)[] = [];
    const transport = {
      // The publish is slow (a loaded Redis): the owner's departure is seen before it resolves.
      publish: () => new Promise<number>((resolve) => publishes.push(() => resolve(1))),
    } as unknown as Transport;
    const router = new Router({
      nodeId: 'a',
      host: { get: () => undefined } as unknown as ActorHost,
      leases: { owners: async () => ['b'] } as unknown as LeaseManager,
      membership,
      transport,
      log: pino({ level: 'silent' }),
      ownerCacheMs: 1000,
      retryDelayMs: 1,
    });
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    const mochaListeners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', onUnhandled);
    try {
      const call = router.call('inst-1', 'describe', {}, 200).then(
        () => 'answered',
        (err: Error) => err.name,
      );
      while (publishes.length === 0) await new Promise((r) => setImmediate(r));
      changed!([node('a')]);
      await new Promise((r) => setTimeout(r, 20));
      publishes.splice(0).forEach((release) => release());
      // The retry publishes again and nobody answers: the call ends at its deadline.
      const retried = setInterval(() => publishes.splice(0).forEach((release) => release()), 5);
      expect(await call).to.equal('TimeoutError');
      clearInterval(retried);
      await new Promise((r) => setTimeout(r, 20));
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.removeListener('unhandledRejection', onUnhandled);
      for (const l of mochaListeners) process.on('unhandledRejection', l as (...args: unknown[]) => void);
    }
  });
});
