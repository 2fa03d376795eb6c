import { expect } from 'chai';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import { CALL_REJECTIONS_NAMESPACE } from '../../../src/store/namespaces.js';
import { hashToken } from '../../../src/security/tokens.js';
import { startTestNode } from '../../helpers/test-node.js';
import type { TestNode } from '../../helpers/test-node.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';
import { until } from '../../helpers/until.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';

/**
 * WhatsApp forgets a message once the device's receipt arrives: the receipt waits until the owner has
 * durably queued the event, and a call offer's ack until the rejection it owes is recorded.
 */
describe('the network is acknowledged once events are stored (Baileys through the simulator)', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  let node: TestNode;
  let hooks: WebhookReceiver;
  let token: string;
  let instanceId: string;
  const me = '5511966660001';
  const alice = '5511966660002';
  const env = () => ({
    ...sim.nodeEnv,
    ALLOW_PRIVATE_URLS: 'true',
    RATE_LIMIT_PER_MINUTE: '100000',
    SQLITE_BUSY_TIMEOUT_MS: '100',
  });

  const companion = async () =>
    (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === me && !d.phone && d.linked);

  before(async () => {
    sim = await startTestSimulator();
    hooks = await WebhookReceiver.start();
    node = await startTestNode(env());
    const account = await node.createAccount('acme');
    await sim.control.addPhone(me);
    await sim.control.addPhone(alice);
    token = await node.createInstance(account, {
      name: 'desk',
      settings: { autoRejectCalls: true, callRejectMessage: 'No calls, please write' },
      webhookEnabled: true,
      webhookURL: `${hooks.url}/hook`,
      webhookEvents: ['message.exchange'],
    });
    instanceId = (await node.store.instances.findByTokenHash(hashToken(token)))!.id;
    const qr = await node.api.get('/api/instance/connect/desk', { token });
    await sim.control.ok('POST', `/phones/${me}/scan`, { qr: qr.body.qrCode });
    await until(
      async () =>
        (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'connected',
      'connected',
      15_000,
    );
  });

  after(async () => {
    await node?.stop();
    await sim?.close();
    await hooks?.stop();
  });

  it("holds a message's receipt while the store is locked (no retry request, no error ack), and sends it once its event is queued", async () => {
    const db = new Database(join(node.dataDir, 'switchboard.db'));
    db.exec('BEGIN IMMEDIATE');
    let released = false;
    try {
      const { id } = await sim.control.send(alice, { to: me, text: 'kept until stored' });
      // Delivered to the companion, but its receipt is held: WhatsApp still keeps the message for it.
      await until(
        async () => (await sim.control.log()).events.some((e) => e.kind === 'deliver' && e.id === id),
        'delivered',
        10_000,
      );
      await new Promise((r) => setTimeout(r, 600));
      const { events } = await sim.control.log();
      expect(events.some((e) => e.kind === 'receipt' && e.id === id && e.device?.includes(':'))).to.equal(false);
      expect((await companion()).pending).to.be.greaterThan(0);
      db.exec('ROLLBACK');
      released = true;
      await until(() => hooks.received.find((r) => r.body?.data?.id === id), 'the webhook gets it', 15_000);
      await until(
        async () =>
          (await sim.control.log()).events.some((e) => e.kind === 'receipt' && e.id === id && e.device?.includes(':')),
        'the receipt, once queued',
        10_000,
      );
    } finally {
      if (!released) db.exec('ROLLBACK');
      db.close();
    }
  });

  it('a message WhatsApp relays twice (the copy fails to decrypt, and is sent anew on a retry receipt) is emitted once', async () => {
    // Once the instance has written to Alice, her messages are plain `msg`: a spent copy asks for a retry.
    const first = await sim.control.send(alice, { to: me, text: 'hello' });
    await until(() => hooks.received.find((r) => r.body?.data?.id === first.id), 'the first message', 15_000);
    const reply = await node.api.post('/api/message/text/desk', { number: alice, text: 'hi Alice' }, { token });
    expect(reply.status, JSON.stringify(reply.body)).to.equal(200);
    await until(
      async () => (await sim.control.received(alice)).some((r) => r.text === 'hi Alice'),
      'the reply',
      10_000,
    );
    const device = (await companion()).jid as string;
    await sim.control.ok('POST', '/faults', { kind: 'duplicate', device, count: 1 });
    const { id } = await sim.control.send(alice, { to: me, text: 'said once' });
    const companionReceipts = async (type: string) =>
      (await sim.control.log()).events.filter(
        (e) => e.kind === 'receipt' && e.id === id && e.device?.includes(':') && e.type === type,
      ).length;
    await until(async () => (await companionReceipts('retry')) >= 1, 'the retry receipt for the spent copy', 15_000);
    await until(async () => (await companionReceipts('inactive')) >= 2, 'the copy sent anew, receipted', 15_000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(hooks.received.filter((r) => r.body?.data?.id === id)).to.have.length(1);
  });

  it('a send WhatsApp never acks (a half-open connection) is answered unknown, and the owner connects again at once', async () => {
    const device = (await companion()).jid as string;
    const logins = async () =>
      ((await companion()).history as { kind: string }[]).filter((h) => h.kind === 'login').length;
    const before = await logins();
    // The server reads and sends nothing more on that connection, and never closes it: only the client's
    // keep-alive (30 to 60 s) would find out.
    await sim.control.ok('POST', '/faults', { kind: 'lost', device });
    const started = Date.now();
    const res = await node.api.post('/api/message/text/desk', { number: alice, text: 'into the void' }, { token });
    expect(res.status, JSON.stringify(res.body)).to.equal(503);
    expect(res.body.error.message).to.include('no ack from WhatsApp within 10000 ms');
    await until(async () => (await logins()) > before, 'a new login', 10_000);
    expect(Date.now() - started, 'well before the keep-alive would notice').to.be.below(25_000);
    await until(
      async () =>
        (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'connected',
      'connected again',
      10_000,
    );
  });

  it('a rejection a dead owner recorded (after acking the offer) is finished by the next owner', async () => {
    // What an owner leaves when it dies between acking a call offer and rejecting it.
    const dir = node.dataDir;
    await node.stop({ keepData: true });
    const { callId } = await sim.control.ok('POST', `/phones/${alice}/call`, { to: me });
    const store = new Database(join(dir, 'switchboard.db'));
    const epoch = (
      store.prepare('SELECT owner_epoch FROM instances WHERE id = ?').get(instanceId) as { owner_epoch: number }
    ).owner_epoch;
    store.close();
    const { SqliteStore } = await import('../../../src/store/sqlite/sqlite-store.js');
    const sqlite = new SqliteStore(join(dir, 'switchboard.db'));
    await sqlite.ownedState.write(instanceId, epoch, [
      {
        namespace: CALL_REJECTIONS_NAMESPACE,
        key: callId,
        value: JSON.stringify({ from: `${alice}@s.whatsapp.net`, message: 'No calls, please write', at: Date.now() }),
      },
    ]);
    await sqlite.close();
    node = await startTestNode(env(), dir);
    await until(
      async () =>
        (await sim.control.ok<any[]>('GET', `/phones/${alice}/calls`)).some(
          (c) => c.callId === callId && c.action === 'reject',
        ),
      'the rejection reaches the caller',
      20_000,
    );
    await until(
      async () => (await sim.control.received(alice)).some((r) => r.text === 'No calls, please write'),
      'the message',
      10_000,
    );
    // The record is cleared after the message went out, so its reaching the phone may come first.
    await until(
      async () => (await node.store.ownedState.list(instanceId, CALL_REJECTIONS_NAMESPACE)).size === 0,
      'the record cleared',
      5_000,
    );
  });
});
