import { expect } from 'chai';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import type { ActorContext } from '../../src/actors/actor-context.js';
import { EventPipeline } from '../../src/actors/event-pipeline.js';
import type { SessionLifecycle } from '../../src/actors/session-lifecycle.js';
import { NotOwnerError, StoreUnavailableError } from '../../src/errors.js';
import type { InstanceEventSink, MessageOnce } from '../../src/events/instance-event-sink.js';
import type { InstanceEvent } from '../../src/events/instance-events.js';
import type { NormalizedMessage } from '../../src/msgnet/msgnet-events.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { instanceRecord } from '../helpers/records.js';

/**
 * A sink that records what it queued: a message's event with its mark in the store, as the webhook
 * dispatcher does (nothing when that message's event was queued before). `before` runs ahead of each.
 */
function recording(
  store: SqliteStore,
  before: () => Promise<void> = async () => undefined,
  after: () => void = () => undefined,
) {
  const sink = {
    events: [] as InstanceEvent[],
    async emit(
      instance: { id: string },
      event: InstanceEvent,
      _attachments?: unknown,
      _stillOwner?: unknown,
      once?: MessageOnce,
    ): Promise<boolean> {
      await before();
      if (once && !(await store.deliveries.insertOnce([], 0, { ...once, instanceId: instance.id, at: Date.now() }))) {
        return false;
      }
      sink.events.push(event);
      after();
      return true;
    },
  };
  return sink satisfies InstanceEventSink;
}

const message = (id: string): NormalizedMessage => ({
  id,
  fromMe: false,
  timestamp: Date.now(),
  chat: { jid: '5511900000002@s.whatsapp.net', type: 'private' },
  sender: { jid: '5511900000002@s.whatsapp.net' },
  type: 'text',
  text: `text of ${id}`,
});

/**
 * A message the owner decrypted (its Signal keys spent, so WhatsApp's next copy cannot be decrypted by the
 * next owner) whose event could not leave before the instance was lost: it is queued for the webhooks anyway,
 * marked emitted, and nothing else happens (no receipt, no WebSocket).
 */
describe('the event pipeline: a message decrypted before the instance was lost is queued, not dropped', () => {
  let dir: string;
  let store: SqliteStore;
  let instanceId: string;

  beforeEach(async () => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-salvage-'));
    store = new SqliteStore(join(dir, 'switchboard.db'));
    const accountId = randomUUID();
    await store.accounts.create({
      id: accountId,
      name: `acct-${accountId.slice(0, 8)}`,
      tokenHash: randomUUID(),
      instanceQuota: 10,
      allowedOrigins: [],
      createdAt: new Date().toISOString(),
    });
    const instance = instanceRecord(accountId);
    await store.instances.create(instance, [], 10);
    instanceId = instance.id;
  });

  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  function pipeline(
    owner: { lost: boolean; stopped: boolean },
    beforeEmit?: () => Promise<void>,
    afterEmit?: () => void,
    /** Whether the extensions durably take a message handed to them. */
    take: () => boolean = () => true,
  ) {
    const sink = recording(store, beforeEmit, afterEmit);
    const salvage = recording(store);
    const acknowledged: string[] = [];
    const notified: string[] = [];
    const assertOwner = () => {
      if (owner.lost) throw new NotOwnerError(instanceId);
    };
    const ctx = {
      instanceId,
      store,
      log: pino({ level: 'silent' }),
      assertOwner,
      setConnection: async () => undefined,
    } as unknown as ActorContext;
    const lifecycle = {
      get stopped() {
        return owner.stopped;
      },
      session: () => ({}),
      settings: () => ({ ignoreGroupMessages: false, ignoreStatus: false, autoReadMessages: false }),
      instance: () => ({ id: instanceId, name: 'desk', connection: { state: 'connecting' } }),
      recordConnection: () => undefined,
      assertOwner,
    } as unknown as SessionLifecycle;
    const events = new EventPipeline({ sink, salvage }, ctx, lifecycle, {
      notify: async (m) => {
        notified.push(m.id);
        return take();
      },
      connected: () => undefined,
    });
    const report = (m: NormalizedMessage) =>
      events.report({ type: 'message', message: m, acknowledge: () => acknowledged.push(m.id) });
    return { events, report, sink, salvage, acknowledged, notified };
  }

  it('lost between its arrival and its event: queued durably, marked emitted, never acknowledged', async () => {
    const owner = { lost: true, stopped: false };
    const p = pipeline(owner);
    p.report(message('M1'));
    await p.events.drainedQuiet();
    expect(p.sink.events).to.have.length(0);
    expect(p.salvage.events.map((e) => e.event)).to.deep.equal(['message.exchange']);
    expect(p.acknowledged).to.deep.equal([]);
    expect(p.notified).to.deep.equal([]);
    expect((await store.messages.find(instanceId, 'M1'))?.emittedAt).to.be.a('number');
  });

  it('stopped with the message still waiting in line: queued too, and the next copy is only settled', async () => {
    const p = pipeline({ lost: false, stopped: true });
    p.report(message('M2'));
    await p.events.drainedQuiet();
    expect(p.salvage.events).to.have.length(1);
    // The next owner gets WhatsApp's next copy (were it decryptable): its event left already.
    const next = pipeline({ lost: false, stopped: false });
    next.report(message('M2'));
    await next.events.drainedQuiet();
    expect(next.sink.events).to.have.length(0);
    expect(next.acknowledged).to.deep.equal(['M2']);
    // Its extensions (chatbot, helpdesk) never saw it: the next owner hands it to them, once.
    expect(next.notified).to.deep.equal(['M2']);
    next.report(message('M2'));
    await next.events.drainedQuiet();
    expect(next.acknowledged).to.deep.equal(['M2', 'M2']);
    expect(next.notified).to.deep.equal(['M2']);
  });

  it('the next owner hands what a lost owner queued to its extensions once connected, with no new copy', async () => {
    const lost = pipeline({ lost: true, stopped: false });
    lost.report(message('M4'));
    lost.report(message('M5'));
    await lost.events.drainedQuiet();
    expect(lost.salvage.events).to.have.length(2);
    const next = pipeline({ lost: false, stopped: false });
    next.events.report({ type: 'connection', state: 'connected' });
    await next.events.drainedQuiet();
    expect(next.notified).to.deep.equal(['M4', 'M5']);
    // WhatsApp's next copy then only settles.
    next.report(message('M4'));
    next.events.report({ type: 'connection', state: 'connected' });
    await next.events.drainedQuiet();
    expect(next.notified).to.deep.equal(['M4', 'M5']);
    expect(next.acknowledged).to.deep.equal(['M4']);
  });

  it("a lost owner queueing the message while its successor handles WhatsApp's copy: one event, handed over once", async () => {
    const stale = pipeline({ lost: true, stopped: false });
    // The successor found no event of M6 in the history; the lost owner queues its own just before the
    // successor's event is queued.
    const owner = pipeline({ lost: false, stopped: false }, async () => {
      if (stale.salvage.events.length > 0) return;
      stale.report(message('M6'));
      await stale.events.drainedQuiet();
    });
    owner.report(message('M6'));
    await owner.events.drainedQuiet();
    await owner.events.handedOver();
    expect(stale.salvage.events).to.have.length(1);
    expect(owner.sink.events).to.have.length(0);
    expect(owner.acknowledged).to.deep.equal(['M6']);
    expect(owner.notified).to.deep.equal(['M6']);
    expect(await store.messages.owed(instanceId, 10)).to.deep.equal([]);
    owner.events.report({ type: 'connection', state: 'connected' });
    await owner.events.drainedQuiet();
    await owner.events.handedOver();
    expect(owner.notified).to.deep.equal(['M6']);
  });

  it('lost just after its event was queued: the extensions are owed it, and the next owner hands it to them', async () => {
    const owner = { lost: false, stopped: false };
    // The sink queues the event, then the instance is lost (FanOutSink's owner check after the queue).
    const p = pipeline(owner, undefined, () => {
      owner.lost = true;
      throw new NotOwnerError(instanceId);
    });
    p.report(message('M7'));
    await p.events.drainedQuiet();
    expect(p.sink.events).to.have.length(1);
    expect([p.acknowledged, p.notified]).to.deep.equal([[], []]);
    expect((await store.messages.owed(instanceId, 10)).map((o) => o.id)).to.deep.equal(['M7']);
    const next = pipeline({ lost: false, stopped: false });
    next.events.report({ type: 'connection', state: 'connected' });
    await next.events.drainedQuiet();
    await next.events.handedOver();
    expect(next.notified).to.deep.equal(['M7']);
    expect(await store.messages.owed(instanceId, 10)).to.deep.equal([]);
  });

  it('an owner that keeps the instance hands a received message to its extensions once, and owes nothing after', async () => {
    const p = pipeline({ lost: false, stopped: false });
    p.report(message('M8'));
    await p.events.drainedQuiet();
    await p.events.handedOver();
    expect([p.acknowledged, p.notified]).to.deep.equal([['M8'], ['M8']]);
    expect(await store.messages.owed(instanceId, 10)).to.deep.equal([]);
  });

  it('lost before its extensions took it: still owed, and the next owner hands it to them again', async () => {
    const owner = { lost: false, stopped: false };
    // The chatbot's first write is refused: the owner lost the instance after the event left.
    const p = pipeline(owner, undefined, undefined, () => {
      owner.lost = true;
      return false;
    });
    p.report(message('M11'));
    await p.events.drainedQuiet();
    await p.events.handedOver();
    expect([p.acknowledged, p.notified]).to.deep.equal([['M11'], ['M11']]);
    expect((await store.messages.owed(instanceId, 10)).map((o) => o.id)).to.deep.equal(['M11']);
    const next = pipeline({ lost: false, stopped: false });
    next.events.report({ type: 'connection', state: 'connected' });
    await next.events.drainedQuiet();
    await next.events.handedOver();
    expect(next.notified).to.deep.equal(['M11']);
    expect(await store.messages.owed(instanceId, 10)).to.deep.equal([]);
  });

  it('the history out of reach: the message waits for it, then is queued once with its mark', async () => {
    const save = store.messages.save.bind(store.messages);
    let refused = 0;
    store.messages.save = async (record) => {
      if (refused++ < 2) throw new StoreUnavailableError();
      return save(record);
    };
    try {
      const p = pipeline({ lost: false, stopped: false });
      p.report(message('M9'));
      await p.events.drainedQuiet();
      expect(p.sink.events).to.have.length(1);
      expect([p.acknowledged, p.notified]).to.deep.equal([['M9'], ['M9']]);
      // Marked: a node salvaging the same message now finds it queued.
      expect((await store.messages.find(instanceId, 'M9'))?.emittedAt).to.be.a('number');
      const stale = pipeline({ lost: false, stopped: true });
      stale.report(message('M9'));
      await stale.events.drainedQuiet();
      expect(stale.salvage.events).to.have.length(0);
    } finally {
      store.messages.save = save;
    }
  });

  it('the debt out of reach: the owner waits for the store to end it once its extensions took the message', async () => {
    const settleOwed = store.messages.settleOwed.bind(store.messages);
    let refused = 0;
    store.messages.settleOwed = async (id, messageId) => {
      if (refused++ < 2) throw new StoreUnavailableError();
      return settleOwed(id, messageId);
    };
    try {
      const p = pipeline({ lost: false, stopped: false });
      p.report(message('M10'));
      await p.events.drainedQuiet();
      await p.events.handedOver();
      expect([p.acknowledged, p.notified]).to.deep.equal([['M10'], ['M10']]);
      expect(refused).to.equal(3);
      expect(await store.messages.owed(instanceId, 10)).to.deep.equal([]);
    } finally {
      store.messages.settleOwed = settleOwed;
    }
  });

  it('a message whose event left already is not queued again', async () => {
    const p = pipeline({ lost: false, stopped: false });
    p.report(message('M3'));
    await p.events.drainedQuiet();
    expect(p.sink.events).to.have.length(1);
    const stale = pipeline({ lost: false, stopped: true });
    stale.report(message('M3'));
    await stale.events.drainedQuiet();
    expect(stale.salvage.events).to.have.length(0);
  });
});
