import { OutcomeUnknownError } from '../../src/errors.js';
import { expect } from 'chai';
import { pino } from 'pino';
import type { ActorHost } from '../../src/cluster/actor-host.js';
import type { Membership, NodeInfo } from '../../src/cluster/membership.js';
import { Router } from '../../src/cluster/router.js';
import type { Transport } from '../../src/transport/transport.js';
import { ManualClock, settle } from '../helpers/manual-clock.js';

const node = (nodeId: string) => ({ nodeId }) as NodeInfo;

/** A router on node `nodeId`, for which node `b` owns every instance. */
function routerOn(
  nodeId: string,
  host: { get: () => unknown },
  membership: Membership,
  transport: Transport,
  clock = new ManualClock(),
) {
  return new Router({
    nodeId,
    host: host as unknown as ActorHost,
    directory: { lookup: async () => ['b'], record: async () => undefined, forget: async () => undefined },
    membership,
    transport,
    log: pino({ level: 'silent' }),
    ownerCacheMs: 1000,
    retryDelayMs: 1,
    clock,
  });
}

/** A router on node `a` whose instance is owned by node `b`, over a transport the test controls. */
function routerToB(publish: (channel: string, message: string) => Promise<number>) {
  let changed: ((nodes: NodeInfo[]) => void) | undefined;
  let replies: ((raw: string) => void) | undefined;
  const membership = {
    onChange: (listener: (nodes: NodeInfo[]) => void) => (changed = listener),
    liveNodes: () => [node('a'), node('b')],
    refresh: async () => [node('a'), node('b')],
  } as unknown as Membership;
  const transport = {
    publish,
    subscribe: async (channel: string, onMessage: (raw: string) => void) => {
      if (channel.includes('reply')) replies = onMessage;
      return async () => undefined;
    },
  } as unknown as Transport;
  const clock = new ManualClock();
  const router = routerOn('a', { get: () => undefined }, membership, transport, clock);
  return {
    router,
    clock,
    leave: (nodes: NodeInfo[]) => changed?.(nodes),
    reply: (raw: string) => replies?.(raw),
  };
}

describe('Router: calls that may have run are never sent twice', () => {
  it('the owner leaving the membership mid-call fails nothing: its reply still answers, and nothing is resent', async () => {
    const sent: { id: string }[] = [];
    const r = routerToB(async (_channel, message) => {
      sent.push(JSON.parse(message) as { id: string });
      return 1;
    });
    await r.router.start();
    const call = r.router.call('inst-1', 'describe', {}, 2000);
    while (sent.length === 0) await settle();
    // SIGTERM on b: it announces that it leaves, then drains what it accepted and replies.
    r.leave([node('a')]);
    await r.clock.advance(30);
    r.reply(JSON.stringify({ t: 'reply', id: sent[0]!.id, ok: true, result: { epoch: 3 } }));
    expect(await call).to.deep.equal({ epoch: 3 });
    expect(sent, 'publishes').to.have.length(1);
  });

  it('an owner that dies mid-call ends the call at its deadline (504), never with a resend', async () => {
    let sent = 0;
    const r = routerToB(async () => {
      sent++;
      return 1;
    });
    await r.router.start();
    const call = r.router.call('inst-1', 'describe', {}, 150).then(
      () => 'answered',
      (err: Error) => err.name,
    );
    await r.clock.advance(20);
    r.leave([node('a')]);
    let ended = false;
    void call.then(() => (ended = true));
    await r.clock.advance(129);
    expect(ended, 'not before its deadline').to.equal(false);
    await r.clock.advance(1);
    expect(await call).to.equal('TimeoutError');
    expect(sent).to.equal(1);
  });

  it('a publish that fails may still have been delivered: the outcome is unknown, and nothing is resent', async () => {
    let sent = 0;
    const r = routerToB(async () => {
      sent++;
      throw new Error('Connection is closed.');
    });
    await r.router.start();
    const err = await r.router.call('inst-1', 'describe', {}, 2000).then(
      () => undefined,
      (e: Error) => e,
    );
    expect(err).to.be.instanceOf(OutcomeUnknownError);
    expect(sent).to.equal(1);
  });

  it('an owner answering "outcome unknown" (ownership lost mid-turn) is not retried; "not owner" is, once', async () => {
    const sent: { id: string }[] = [];
    const r = routerToB(async (_channel, message) => {
      sent.push(JSON.parse(message) as { id: string });
      return 1;
    });
    await r.router.start();
    const lost = r.router.call('inst-1', 'describe', {}, 2000).then(
      () => undefined,
      (e: Error) => e,
    );
    while (sent.length === 0) await settle();
    r.reply(JSON.stringify({ t: 'reply', id: sent[0]!.id, ok: false, code: 'outcome_unknown', message: 'moved' }));
    expect(await lost).to.be.instanceOf(OutcomeUnknownError);
    await r.clock.advance(200);
    expect(sent, 'publishes').to.have.length(1);

    const refused = r.router.call('inst-1', 'describe', {}, 2000);
    while (sent.length === 1) await settle();
    r.reply(JSON.stringify({ t: 'reply', id: sent[1]!.id, ok: false, code: 'not_owner', message: 'moving' }));
    while (sent.length === 2) {
      await r.clock.advance(10);
      await settle();
    }
    r.reply(JSON.stringify({ t: 'reply', id: sent[2]!.id, ok: true, result: { epoch: 4 } }));
    expect(await refused).to.deep.equal({ epoch: 4 });
  });

  it('a deadline that passes while the publish is still awaited is no unhandled rejection', async () => {
    const publishes: (() => void)[] = [];
    // The publish is slow (a loaded Redis): the deadline passes before it resolves.
    const r = routerToB(() => new Promise<number>((resolve) => publishes.push(() => resolve(1))));
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    const mochaListeners = process.listeners('unhandledRejection');
    process.removeAllListeners('unhandledRejection');
    process.on('unhandledRejection', onUnhandled);
    try {
      const call = r.router.call('inst-1', 'describe', {}, 50).then(
        () => 'answered',
        (err: Error) => err.name,
      );
      while (publishes.length === 0) await settle();
      await r.clock.advance(100);
      publishes.splice(0).forEach((release) => release());
      expect(await call).to.equal('TimeoutError');
      await settle();
      expect(unhandled).to.deep.equal([]);
    } finally {
      process.removeListener('unhandledRejection', onUnhandled);
      for (const l of mochaListeners) process.on('unhandledRejection', l as (...args: unknown[]) => void);
    }
  });

  it('"nobody listens on that inbox" proves the call did not run: it is retried once', async () => {
    let sent = 0;
    const r = routerToB(async () => {
      sent++;
      return 0;
    });
    await r.router.start();
    const called = r.router.call('inst-1', 'describe', {}, 500).then(
      () => 'answered',
      (err: Error & { code?: string }) => err.code,
    );
    // The pause before the one retry (retryDelayMs).
    await r.clock.advance(1);
    const outcome = await called;
    expect(outcome).to.equal('not_owner');
    expect(sent).to.equal(2);
  });
});

describe('Router: the owner side', () => {
  /** Node b's started router, serving `actor`; `deliver` puts a raw message in its inbox. */
  async function ownerServing(actor: { call: () => Promise<unknown> }) {
    let inbox: ((raw: string) => void) | undefined;
    const published: { channel: string; message: string }[] = [];
    const router = routerOn(
      'b',
      { get: () => actor },
      { onChange: () => undefined, liveNodes: () => [node('a'), node('b')] } as unknown as Membership,
      {
        publish: async (channel: string, message: string) => (published.push({ channel, message }), 1),
        subscribe: async (channel: string, onMessage: (raw: string) => void) => {
          if (channel.includes('inbox')) inbox = onMessage;
          return async () => undefined;
        },
      } as unknown as Transport,
    );
    await router.start();
    return { published, deliver: (message: object) => inbox!(JSON.stringify(message)) };
  }

  const call = {
    t: 'call',
    id: 'front:1',
    from: 'a',
    instanceId: 'inst-1',
    kind: 'describe',
    payload: {},
    timeoutMs: 1000,
    activate: false,
  };

  it('answers a result that cannot be encoded as an internal error instead of throwing', async () => {
    const owner = await ownerServing({ call: async () => ({ count: 1n }) });
    owner.deliver(call);
    while (owner.published.length === 0) await settle();
    expect(JSON.parse(owner.published[0]!.message)).to.deep.equal({
      t: 'reply',
      id: 'front:1',
      ok: false,
      code: 'internal',
      message: 'Internal server error',
    });
  });

  it('a call delivered twice to the owner (ioredis sends an unanswered PUBLISH again) runs once', async () => {
    let runs = 0;
    const owner = await ownerServing({
      call: async () => {
        runs++;
        return { sent: true };
      },
    });
    owner.deliver(call);
    owner.deliver(call);
    owner.deliver({ ...call, id: 'front:2' });
    await settle();
    expect(runs).to.equal(2);
    expect(owner.published.map((p) => (JSON.parse(p.message) as { id: string }).id)).to.deep.equal([
      'front:1',
      'front:2',
    ]);
  });
});
