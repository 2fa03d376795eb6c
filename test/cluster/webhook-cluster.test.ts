import { expect } from 'chai';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { ClusterFixture, connectAndLink, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';

describe('cluster: webhook deliveries through the store outbox', function () {
  this.timeout(90_000);
  let c: ClusterFixture;
  let receiver: WebhookReceiver;

  before(async function () {
    this.timeout(60_000);
    receiver = await WebhookReceiver.start();
    c = await ClusterFixture.start(2, {
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
      WEBHOOK_LEASE_MS: '3000',
      WEBHOOK_TIMEOUT_MS: '1500',
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '500',
    });
  });

  after(async () => {
    await c?.stop();
    await receiver?.stop();
  });

  it('kill -9 of the node that was delivering loses nothing: another node delivers its pending entries', async () => {
    const api = c.nodes[0]!.api;
    const account = (await api.post('/api/admin/accounts', { name: 'hooks' }, { token: CLUSTER_ADMIN_TOKEN })).body
      .account.token as string;
    const created = await api.post(
      '/api/instance/new',
      { name: 'shop', webhookEnabled: true, webhookURL: receiver.url, webhookEvents: ['message.exchange'] },
      { token: account },
    );
    const token = created.body.instance.token as string;
    await connectAndLink(api, api, 'shop', token);

    // The receiver hangs: every delivery stays taken (leased in the outbox) by whichever node took it.
    receiver.respond = () => 'hang';
    const accountId = (await c.store.accounts.findByName('hooks'))!.id;
    const instanceId = (await c.store.instances.findByName(accountId, 'shop'))!.id;
    const owner = (await c.owners([instanceId]))[0];
    const ids: string[] = [];
    for (let i = 0; i < 8; i++) {
      const res = await c.nodes[i % 2]!.api.post(
        '/api/sandbox/inbound/shop',
        { from: '5511944440000', text: `order ${i}` },
        { token },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      ids.push(res.body.messageId as string);
    }
    await sleep(500);
    // The owner queued them and was nudged at once: it holds (all or most of) them when it dies.
    expect(receiver.received.length, 'deliveries taken before the kill').to.be.greaterThan(0);
    const victim = c.nodes.find((n) => n.nodeId === owner)!;
    await victim.kill9();
    c.remove(victim);

    receiver.respond = () => ({ status: 200 });
    const deadline = Date.now() + 30_000;
    const got = () =>
      new Set(
        receiver
          .accepted()
          .filter((r) => r.body?.event === 'message.exchange')
          .map((r) => r.body.data.id as string),
      );
    while (!ids.every((id) => got().has(id)) && Date.now() < deadline) await sleep(100);
    expect([...got()].filter((id) => ids.includes(id)).sort()).to.deep.equal([...ids].sort());
    // Settled: nothing left pending in the outbox, and no dead letter.
    await sleep(500);
    expect(await c.store.deliveries.countPending()).to.equal(0);
    expect(await c.store.deliveries.listDead(instanceId)).to.deep.equal([]);
  });

  it('a webhook acknowledged through one node gets every event the owner emits after the answer', async () => {
    if (c.nodes.length < 2) await c.addNode();
    const api = c.nodes[0]!.api;
    const account = (await api.post('/api/admin/accounts', { name: 'config' }, { token: CLUSTER_ADMIN_TOKEN })).body
      .account.token as string;
    const created = await api.post('/api/instance/new', { name: 'desk' }, { token: account });
    const token = created.body.instance.token as string;
    await connectAndLink(api, api, 'desk', token);
    const accountId = (await c.store.accounts.findByName('config'))!.id;
    const instanceId = (await c.store.instances.findByName(accountId, 'desk'))!.id;
    const ownerId = (await c.owners([instanceId]))[0];
    const other = c.nodes.find((n) => n.nodeId !== ownerId)!;
    receiver.respond = () => ({ status: 200 });
    const seen = (id: string) => receiver.events('message.exchange').some((r) => r.body?.data?.id === id);
    const ids: string[] = [];
    for (let round = 0; round < 5; round++) {
      // The owner emits an event just before each change, so any copy of the webhooks it kept is fresh.
      const before = await api.post('/api/sandbox/inbound/desk', { from: '5511944441111', text: 'warm' }, { token });
      expect(before.status).to.equal(200);
      const path = `${receiver.url}/round-${round}`;
      const set = await other.api.post(
        '/api/events/webhook/desk',
        { label: 'default', enabled: true, url: path, events: ['message.exchange'] },
        { token },
      );
      expect(set.status, JSON.stringify(set.body)).to.be.oneOf([200, 201]);
      const res = await api.post(
        '/api/sandbox/inbound/desk',
        { from: '5511944441111', text: `after ${round}` },
        { token },
      );
      expect(res.status).to.equal(200);
      ids.push(res.body.messageId as string);
      const deadline = Date.now() + 10_000;
      while (!seen(ids.at(-1)!) && Date.now() < deadline) await sleep(50);
      const got = receiver.events('message.exchange').find((r) => r.body?.data?.id === ids.at(-1));
      expect(got?.path, `round ${round}: the event after the change`).to.equal(`/round-${round}`);
    }
  });
});
