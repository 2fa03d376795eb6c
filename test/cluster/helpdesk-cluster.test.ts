import { expect } from 'chai';
import { FakeChatwoot } from '../helpers/fake-chatwoot.js';
import { ClusterFixture } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';
import { until } from '../helpers/until.js';

describe('cluster: the helpdesk bridge across node processes', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let fake: FakeChatwoot;
  let account: string;

  before(async function () {
    this.timeout(60_000);
    fake = await FakeChatwoot.start();
    c = await ClusterFixture.start(2, {
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000',
      ALLOW_PRIVATE_URLS: 'true',
      HELPDESK_TIMEOUT_MS: '400',
      HELPDESK_RETRIES: '1',
      HELPDESK_RETRY_INTERVAL_MS: '150',
    });
    const res = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'helpdesk-cluster' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    account = res.body.account.token as string;
  });

  after(async () => {
    await c?.stop();
    await fake?.stop();
  });

  async function ownerOf(name: string): Promise<NodeProcess> {
    const acct = (await c.store.accounts.list()).find((a) => a.name === 'helpdesk-cluster')!;
    const id = (await c.store.instances.listByAccount(acct.id)).find((i) => i.name === name)!.id;
    const [owner] = await c.owners([id]);
    return c.nodes.find((n) => n.nodeId === owner)!;
  }

  /** A linked instance with the helpdesk set through a node that does not own it; its owner. */
  async function bridged(name: string, number: string): Promise<NodeProcess> {
    const via = c.nodes[0]!;
    expect((await via.api.post('/api/instance/new', { name }, { token: account })).status).to.equal(201);
    await via.api.get(`/api/instance/connect/${name}`, { token: account });
    expect((await via.api.post(`/api/sandbox/link/${name}`, { number }, { token: account })).status).to.equal(200);
    const owner = await ownerOf(name);
    const set = await c
      .other(owner)
      .api.post(
        `/api/helpdesk/set/${name}`,
        { baseUrl: fake.url, accountId: fake.accountId, apiToken: fake.token, inboxName: `cluster ${name}` },
        { token: account },
      );
    expect(set.status, JSON.stringify(set.body)).to.equal(200);
    return owner;
  }

  it('messages in through any node keep their order; an agent reply is sent once whichever node the webhook reaches', async () => {
    const owner = await bridged('hd-order', '5511300000001');
    const front = c.other(owner);
    const contact = '5511300000101';
    for (const text of ['one', 'two', 'three']) {
      const res = await front.api.post('/api/sandbox/inbound/hd-order', { from: contact, text }, { token: account });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    }
    const conversation = await until(
      () => fake.conversationsOf(fake.contactByIdentifier(`${contact}@s.whatsapp.net`)?.id ?? -1)[0],
      'the conversation',
      15000,
    );
    await until(() => fake.messagesOf(conversation.id).length === 3, 'three messages', 15_000);
    expect(fake.messagesOf(conversation.id).map((m) => m.content)).to.deep.equal(['one', 'two', 'three']);

    const { message } = await fake.agentReply(conversation.id, { content: 'answer' });
    const outbox = async () =>
      (await front.api.get(`/api/sandbox/outbox/hd-order?to=${contact}`, { token: account })).body.messages as any[];
    await until(async () => (await outbox()).length === 1, 'the answer in the outbox', 15_000);
    // The same webhook through the node that does not own the instance: accepted there, not sent twice.
    const delivery = fake.webhooks.find((w) => w.body.id === message.id && w.body.event === 'message_created')!;
    const path = new URL(delivery.url).pathname;
    const again = await front.api.post(path, delivery.body);
    expect(again.status, again.text).to.equal(200);
    await fake.agentReply(conversation.id, { content: 'follow-up' });
    await until(async () => (await outbox()).length === 2, 'the follow-up', 15_000);
    expect((await outbox()).map((e) => e.text)).to.deep.equal(['answer', 'follow-up']);
  });

  it('messages waiting for Chatwoot survive the owner being killed, and reach it once, in order', async () => {
    const owner = await bridged('hd-failover', '5511300000002');
    const survivor = c.other(owner);
    const contact = '5511300000102';
    const inbound = async (text: string) => {
      const res = await survivor.api.post(
        '/api/sandbox/inbound/hd-failover',
        { from: contact, text },
        { token: account },
      );
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
    };
    await inbound('before');
    const conversation = await until(
      () => fake.conversationsOf(fake.contactByIdentifier(`${contact}@s.whatsapp.net`)?.id ?? -1)[0],
      'the conversation',
      15000,
    );
    await until(() => fake.messagesOf(conversation.id).length === 1, 'the first message', 15_000);

    fake.fail({ status: 500 });
    await inbound('queued 1');
    await inbound('queued 2');
    const seen = fake.requests.length;
    await until(() => fake.requests.length > seen + 2, 'the queued messages to be tried', 15_000);
    await owner.kill9();
    c.remove(owner);
    fake.recover();
    await until(() => fake.messagesOf(conversation.id).length >= 3, 'the new owner to deliver the queue', 30_000);
    await inbound('after');
    await until(() => fake.messagesOf(conversation.id).length >= 4, 'the message after the failover', 15_000);
    expect(fake.messagesOf(conversation.id).map((m) => m.content)).to.deep.equal([
      'before',
      'queued 1',
      'queued 2',
      'after',
    ]);
    expect((await ownerOf('hd-failover')).nodeId).to.equal(survivor.nodeId);
  });
});
