import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { expect } from 'chai';
import { pngImage } from '../helpers/media-fixtures.js';
import { ClusterFixture, connectAndLink } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';

const SHOP = '5511870000001';
const BUYER = '5511870000002';
const BUYER_JID = `${BUYER}@s.whatsapp.net`;

/**
 * The hosted product's calls (issue 38) sent to a node that does not own the instance: each reaches the
 * owner through the router, and the MCP endpoint's tools do too.
 */
describe("cluster: the hosted product's routes and the MCP endpoint through a node that does not own the instance", function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let account: string;
  let shopToken: string;
  let owner: NodeProcess;
  let front: NodeProcess;

  before(async function () {
    this.timeout(60_000);
    c = await ClusterFixture.start(2, { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '1000' });
    const created = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'hosted' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    account = created.body.account.token as string;
    for (const name of ['shop', 'buyer']) {
      const res = await c.nodes[0]!.api.post('/api/instance/new', { name }, { token: account });
      expect(res.status, res.text).to.equal(201);
      if (name === 'shop') shopToken = res.body.instance.token as string;
    }
    await connectAndLink(c.nodes[0]!.api, c.nodes[0]!.api, 'shop', account, { number: SHOP });
    await connectAndLink(c.nodes[1]!.api, c.nodes[1]!.api, 'buyer', account, { number: BUYER });
    const accountId = (await c.store.accounts.findByName('hosted'))!.id;
    const id = (await c.store.instances.findByName(accountId, 'shop'))!.id;
    const [ownerId] = await c.owners([id]);
    owner = c.nodes.find((node) => node.nodeId === ownerId)!;
    front = c.other(owner);
  });

  after(async () => {
    await c?.stop();
  });

  it('the instance list shows the token and status on every node', async () => {
    for (const node of [front, owner]) {
      const list = await node.api.get('/api/instance/list?instanceName=shop', { token: account });
      expect(list.status, list.text).to.equal(200);
      expect(list.body).to.deep.include({ status: 'connected' });
      expect(list.body.instances[0]).to.deep.include({ token: shopToken, status: 'connected' });
    }
  });

  it('delay in seconds, presence state, markRead, base64, form, tags and the hosted paths through the non-owner', async () => {
    expect(front.nodeId).not.to.equal(owner.nodeId);
    const started = Date.now();
    const sent = await front.api.post(
      '/api/message/text/shop',
      { number: BUYER, message: 'hello', delay: 1 },
      { token: shopToken },
    );
    expect(sent.status, sent.text).to.equal(200);
    expect(Date.now() - started).to.be.at.least(1000);
    expect(sent.body.data).to.deep.include({ to: BUYER_JID, chat: { jid: BUYER_JID, isGroup: false } });

    const presence = await front.api.post(
      '/api/chat/presence/shop',
      { number: BUYER, state: 'typing', duration: 1 },
      { token: shopToken },
    );
    expect(presence.body).to.deep.include({ state: 'typing', presence: 'composing' });

    const image = await pngImage(20, 20);
    const inbound = await front.api.post(
      '/api/sandbox/inbound/shop',
      { from: BUYER, media: { kind: 'image', mimetype: 'image/png', base64: image.toString('base64') } },
      { token: shopToken },
    );
    expect(inbound.status, inbound.text).to.equal(200);
    const messageId = inbound.body.messageId as string;
    const base64 = await front.api.get(`/api/chat/base64/shop?messageId=${messageId}`, { token: shopToken });
    expect(base64.status, base64.text).to.equal(200);
    expect(base64.body).to.deep.include({ message_id: messageId, base64: image.toString('base64') });

    const read = await front.api.post('/api/chat/markRead/shop', { number: BUYER, messageId }, { token: shopToken });
    expect(read.body).to.deep.include({ message_id: messageId, chat_jid: BUYER_JID });

    const form = await front.api.post(
      '/api/message/form/shop',
      { number: BUYER, message: 'Your details', formType: 'contact_details' },
      { token: shopToken },
    );
    expect(form.status, form.text).to.equal(200);

    const tag = await front.api.post('/api/chat/tag/shop', { name: 'Lead' }, { token: shopToken });
    expect(tag.status, tag.text).to.equal(200);
    const assigned = await front.api.post(
      '/api/chat/assignTag/shop',
      { number: BUYER, tagId: tag.body.tag.id },
      { token: shopToken },
    );
    expect(assigned.body).to.deep.include({ tag_id: tag.body.tag.id });
    const tags = await front.api.get('/api/chat/tag/shop', { token: shopToken });
    expect(tags.body.tags.map((t: any) => t.name)).to.include('Lead');

    const mute = await front.api.post(
      '/api/chat/mute/shop',
      { number: BUYER, mute: true, duration: '8h' },
      { token: shopToken },
    );
    expect(mute.body).to.deep.include({ message: 'Chat muted for 8 hours', duration: 28800 });
  });

  it('MCP: the official client on the non-owner lists the tools and sends through the owner', async () => {
    const client = new Client({ name: 'cluster-agent', version: '1.0.0' });
    await client.connect(
      new StreamableHTTPClientTransport(new URL(`${front.url}/mcp`), { requestInit: { headers: { token: account } } }),
    );
    try {
      const { tools } = await client.listTools();
      expect(tools.map((t) => t.name)).to.include.members(['send_text', 'instance_list', 'chat_list']);
      const result = (await client.callTool({
        name: 'send_text',
        arguments: { instance: 'shop', number: BUYER, message: 'via MCP' },
      })) as { isError?: boolean; structuredContent?: any };
      expect(result.isError ?? false).to.equal(false);
      expect(result.structuredContent).to.deep.include({ success: true, status: 'sent' });
      const outbox = await owner.api.get(`/api/sandbox/outbox/shop?to=${BUYER}`, { token: shopToken });
      expect(outbox.body.messages.at(-1)).to.deep.include({
        text: 'via MCP',
        messageId: result.structuredContent.data.messageId,
      });
      const status = (await client.callTool({ name: 'instance_list', arguments: {} })) as { structuredContent?: any };
      expect(status.structuredContent.instances.map((i: any) => i.status)).to.deep.equal(['connected', 'connected']);
    } finally {
      await client.close();
    }
  });
});
