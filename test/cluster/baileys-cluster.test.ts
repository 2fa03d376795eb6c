import { expect } from 'chai';
import { until } from '../helpers/until.js';
import { hashToken } from '../../src/security/tokens.js';
import { startTestSimulator } from '../helpers/simulator.js';
import type { TestSimulator } from '../helpers/simulator.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ClusterFixture, TEST_TTL_MS } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';

describe('cluster: a live WhatsApp session survives kill -9 of its owner (Baileys through the simulator)', function () {
  this.timeout(120_000);
  let sim: TestSimulator;
  let cluster: ClusterFixture;
  let hooks: WebhookReceiver;
  let token: string;
  const me = '5511977770001';
  const alice = '5511977770002';

  before(async () => {
    sim = await startTestSimulator();
    hooks = await WebhookReceiver.start();
    cluster = await ClusterFixture.start(3, {
      ...sim.nodeEnv,
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
    });
    await sim.control.addPhone(me, 'Cluster phone');
    await sim.control.addPhone(alice, 'Alice');
    const api = cluster.nodes[0]!.api;
    const acct = await api.post('/api/admin/accounts', { name: 'acme' }, { token: CLUSTER_ADMIN_TOKEN });
    expect(acct.status, JSON.stringify(acct.body)).to.equal(201);
    const created = await api.post(
      '/api/instance/new',
      { name: 'sales', webhookEnabled: true, webhookURL: `${hooks.url}/hook`, webhookEvents: ['message.exchange'] },
      { token: acct.body.account.token },
    );
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    token = created.body.instance.token;
  });

  after(async () => {
    await cluster?.stop();
    await sim?.close();
    await hooks?.stop();
  });

  const state = async (node = cluster.nodes[0]!) =>
    (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state;

  it('links through any node, then the new owner resumes from the stored credentials after kill -9', async () => {
    const qr = await cluster.nodes[1]!.api.get('/api/instance/connect/sales', { token });
    expect(qr.body.status, JSON.stringify(qr.body)).to.equal('qr');
    await sim.control.ok('POST', `/phones/${me}/scan`, { qr: qr.body.qrCode });
    await until(async () => (await state()) === 'connected', 'connected', 20_000);

    for (let i = 0; i < 3; i++) {
      const res = await cluster.nodes[i]!.api.post(
        '/api/message/text/sales',
        { number: alice, text: `before ${i}` },
        { token },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    await until(
      async () => (await sim.control.received(alice)).filter((r) => r.text?.startsWith('before')).length === 3,
      'Alice has the first three',
      20_000,
    );

    const instanceId = (await cluster.store.instances.findByTokenHash(hashToken(token)))!.id;
    const [owner] = await cluster.owners([instanceId]);
    const victim = cluster.nodes.find((n) => n.nodeId === owner)!;
    await victim.kill9();
    cluster.remove(victim);
    await cluster.waitAllOwned(TEST_TTL_MS * 4, [instanceId]);
    // The simulator, not the nodes, says when the new owner is on: the stored state may still read the
    // dead owner's "connected" for a moment.
    const companionDevice = async () =>
      (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === me && !d.phone);
    await until(
      async () => {
        const node = (await companionDevice())?.connection?.node;
        return node !== undefined && node !== owner;
      },
      'the companion logged in from another node',
      30_000,
    );
    await until(async () => (await state()) === 'connected', 'connected again', 30_000);

    const companion = await companionDevice();
    const kinds = companion.history.map((h: any) => h.kind);
    // One link, then logins: the new owner used the stored credentials, no second registration.
    expect(kinds.filter((k: string) => k === 'registered')).to.have.length(1);
    expect(kinds.filter((k: string) => k === 'login').length).to.be.greaterThan(1);
    expect(companion.connection.node).to.not.equal(owner);

    for (let i = 0; i < 5; i++) {
      const via = cluster.nodes[i % cluster.nodes.length]!;
      const res = await via.api.post('/api/message/text/sales', { number: alice, text: `after ${i}` }, { token });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    await until(
      async () => (await sim.control.received(alice)).filter((r) => r.text?.startsWith('after')).length === 5,
      'Alice decrypts every later message',
      20_000,
    );
    const { id } = await sim.control.send(alice, { to: me, text: 'are you still there?' });
    await until(
      () => hooks.received.find((r) => r.body?.event === 'message.exchange' && r.body.data.id === id),
      "the webhook gets Alice's message from the new owner",
      20_000,
    );
    expect(await sim.control.failures(alice)).to.deep.equal([]);
    expect(await sim.control.failures(me)).to.deep.equal([]);
  });
});
