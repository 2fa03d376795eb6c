import { join } from 'node:path';
import Database from 'better-sqlite3';
import { expect } from 'chai';
import { hashToken } from '../../src/security/tokens.js';
import { SQLITE_FILE_NAME } from '../../src/store/open-store.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { until } from '../helpers/until.js';

describe('events accepted from the network are kept through a store outage', () => {
  let n: NetworkNode;
  let receiver: WebhookReceiver;
  let token: string;

  before(async () => {
    n = await startNetworkNode({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_BASE_MS: '20' });
    receiver = await WebhookReceiver.start();
    token = await n.linked('durable', '5511900000201');
    expectOk(
      await n.node.api.post(
        '/api/events/webhook/durable',
        { url: receiver.url, enabled: true, events: ['message.exchange'] },
        { token },
      ),
      201,
    );
  });
  after(async () => {
    await n?.stop();
    await receiver?.stop();
  });

  it('an inbound message whose enqueue fails is retried until it is queued, then delivered once', async () => {
    const outbox = n.node.store.deliveries;
    const insertOnce = outbox.insertOnce.bind(outbox);
    let refused = 0;
    // The store refuses the outbox write (a message's event, with its mark) three times, then recovers.
    outbox.insertOnce = async (rows, dueAt, claim) => {
      if (refused < 3) {
        refused++;
        throw new Error('database is locked');
      }
      return insertOnce(rows, dueAt, claim);
    };
    try {
      expectOk(
        await n.node.api.post('/api/sandbox/inbound/durable', { from: '5511900000202', text: 'kept' }, { token }),
      );
      await until(() => receiver.events('message.exchange').length > 0, 'the webhook', 10_000);
      await new Promise((r) => setTimeout(r, 200));
      const texts = receiver.events('message.exchange').map((r) => r.body.data.message.content.text);
      expect(texts).to.deep.equal(['kept']);
      expect(refused).to.equal(3);
    } finally {
      outbox.insertOnce = insertOnce;
    }
  });
});

describe('a store outage: the SQLite file locked by another process past the busy timeout', () => {
  let n: NetworkNode;
  let receiver: WebhookReceiver;
  let token: string;
  let locker: Database.Database | undefined;

  // Another connection holding the write lock, as a stuck process on the same file would.
  const lock = () => {
    locker = new Database(join(n.node.dataDir, SQLITE_FILE_NAME));
    locker.exec('BEGIN IMMEDIATE');
  };
  const unlock = () => {
    locker?.exec('ROLLBACK');
    locker?.close();
    locker = undefined;
  };

  before(async () => {
    n = await startNetworkNode({
      ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_BASE_MS: '20',
      SQLITE_BUSY_TIMEOUT_MS: '200',
    });
    receiver = await WebhookReceiver.start();
    token = await n.linked('outage', '5511900000301');
    expectOk(
      await n.node.api.post(
        '/api/events/webhook/outage',
        { url: receiver.url, enabled: true, events: ['message.exchange', 'instance.state'] },
        { token },
      ),
      201,
    );
  });
  afterEach(() => unlock());
  after(async () => {
    await n?.stop();
    await receiver?.stop();
  });

  it('answers a write 503 `store unavailable` (never 500) and changes nothing; it works again once the lock goes', async () => {
    const before = await n.node.api.get('/api/instance/getSettings/outage', { token });
    expectOk(before);
    lock();
    const started = Date.now();
    const res = await n.node.api.post('/api/instance/settings/outage', { keepOnlineStatus: true }, { token });
    expect(res.status, res.text).to.equal(503);
    expect(res.body).to.deep.equal({ success: false, error: { message: 'store unavailable', code: 'unavailable' } });
    expect(Date.now() - started).to.be.below(5000);
    unlock();
    expect((await n.node.api.get('/api/instance/getSettings/outage', { token })).body).to.deep.equal(before.body);
    expectOk(await n.node.api.post('/api/instance/settings/outage', { keepOnlineStatus: true }, { token }));
  });

  it('holds the events received meanwhile, in order, and delivers each once when the store is back', async () => {
    lock();
    // The sandbox answers once the owner has queued the event: that waits for the store.
    const sent = ['held 1', 'held 2'].map((text) =>
      n.node.api.post('/api/sandbox/inbound/outage', { from: '5511900000302', text }, { token }),
    );
    await new Promise((r) => setTimeout(r, 1000));
    expect(receiver.events('message.exchange')).to.have.length(0);
    unlock();
    for (const res of await Promise.all(sent)) expectOk(res);
    await until(() => receiver.events('message.exchange').length >= 2, 'the webhooks', 10_000);
    await new Promise((r) => setTimeout(r, 200));
    const texts = receiver.events('message.exchange').map((r) => r.body.data.message.content.text);
    expect(texts).to.deep.equal(['held 1', 'held 2']);
  });

  it('refuses a logout it cannot record with 503, leaving the link as it was', async () => {
    lock();
    const res = await n.node.api.post('/api/instance/logout/outage', {}, { token });
    unlock();
    expect(res.status, res.text).to.equal(503);
    expect(res.body.error.message).to.equal('store unavailable');
    const instance = await n.node.store.instances.findByTokenHash(hashToken(token));
    expect(instance!.connection.state).to.equal('connected');
  });

  it('holds connection changes that could not be stored and emits them, in order, once the store is back', async () => {
    const seen = receiver.events('instance.state').length;
    lock();
    const reconnect = n.node.api.post('/api/instance/reconnect/outage', {}, { token });
    await new Promise((r) => setTimeout(r, 800));
    expect(receiver.events('instance.state')).to.have.length(seen);
    unlock();
    expectOk(await reconnect);
    await until(
      () =>
        receiver
          .events('instance.state')
          .slice(seen)
          .some((r) => r.body.data.state === 'connected'),
      'the instance.state webhooks',
      10000,
    );
    const states = receiver
      .events('instance.state')
      .slice(seen)
      .map((r) => r.body.data.state);
    expect(states[0]).to.equal('disconnected');
    expect(states.at(-1)).to.equal('connected');
  });
});
