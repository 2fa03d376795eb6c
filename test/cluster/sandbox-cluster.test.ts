import { expect } from 'chai';
import { Redis } from 'ioredis';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { channels } from '../../src/redis/keys.js';
import { pngImage } from '../helpers/media-fixtures.js';
import { ClusterFixture, TEST_TTL_MS, connectAndLink } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';
import { until } from '../helpers/until.js';

describe('cluster: sandbox instances across node processes', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let account: string;
  let sub: Redis;
  const events = new Map<string, EventEnvelope[]>();
  /** The two instances of the first test, on different nodes, and a front node that owns neither sender. */
  let pair: { from: string; to: string; toNumber: string; front: NodeProcess } | undefined;

  before(async function () {
    this.timeout(60_000);
    c = await ClusterFixture.start(3, { RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '1000' });
    const res = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'sandbox-cluster' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    account = res.body.account.token as string;
    // Listens to every instance's event channel, as WebSocket fan-out on any node does.
    sub = new Redis(c.redis.url);
    await sub.psubscribe(channels.events('*'));
    sub.on('pmessage', (_p: string, channel: string, raw: string) => {
      const id = channel.slice(channels.events('').length);
      events.set(id, [...(events.get(id) ?? []), JSON.parse(raw) as EventEnvelope]);
    });
  });

  after(async () => {
    sub?.disconnect();
    await c?.stop();
  });

  async function instanceId(name: string): Promise<string> {
    return (
      await c.store.instances.listByAccount(
        (await c.store.accounts.list()).find((a) => a.name === 'sandbox-cluster')!.id,
      )
    ).find((i) => i.name === name)!.id;
  }

  async function ownerOf(name: string): Promise<NodeProcess> {
    const [owner] = await c.owners([await instanceId(name)]);
    return c.nodes.find((n) => n.nodeId === owner)!;
  }

  /** Creates and links an instance through `via`; returns its token. */
  async function linkedVia(via: NodeProcess, name: string, number: string): Promise<string> {
    const created = await via.api.post('/api/instance/new', { name }, { token: account });
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    const token = created.body.instance.token as string;
    await connectAndLink(via.api, via.api, name, token, { number });
    return token;
  }

  it('two instances owned by different nodes exchange messages, with statuses, through any node', async () => {
    await linkedVia(c.nodes[0]!, 'left', '5511200000001');
    await linkedVia(c.nodes[1]!, 'right', '5511200000002');
    // Make sure the two live on different nodes (placement could put both on one): if not, add instances.
    let names = ['left', 'right'];
    for (let i = 0; (await ownerOf(names[0]!)) === (await ownerOf(names[1]!)); i++) {
      await linkedVia(c.nodes[2]!, `right-${i}`, `55112000001${String(i).padStart(2, '0')}`);
      names = [names[0]!, `right-${i}`];
    }
    const [from, to] = names as [string, string];
    const toNumber = to === 'right' ? '5511200000002' : `55112000001${to.slice('right-'.length).padStart(2, '0')}`;
    const fromOwner = await ownerOf(from);
    const front = c.other(fromOwner);
    pair = { from, to, toNumber, front };
    const sent = await front.api.post(
      `/api/message/text/${from}`,
      { number: toNumber, text: 'across nodes' },
      { token: account },
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    const id = sent.body.data.messageId as string;
    const toId = await instanceId(to);
    const fromId = await instanceId(from);
    await until(
      () =>
        (events.get(toId) ?? []).some((e) => e.event === 'message.exchange' && (e.data as { id: string }).id === id),
      'the message on the other node',
      10000,
    );
    await until(
      () =>
        (events.get(fromId) ?? []).some(
          (e) => e.event === 'message.status' && (e.data as { status: string }).status === 'delivered',
        ),
      'the delivery receipt back',
      10000,
    );
  });

  it('every message kind, sent through a node that does not own the sender, reaches the other node typed', async () => {
    const { from, to, toNumber, front } = pair!;
    const png = await pngImage(64, 64);
    const post = async (kind: string, body: Record<string, unknown>) => {
      const res = await front.api.post(
        `/api/message/${kind}/${from}`,
        { number: toNumber, ...body },
        { token: account },
      );
      expect(res.status, `${kind}: ${JSON.stringify(res.body)}`).to.equal(200);
      return res.body.data.messageId as string;
    };
    const text = await post('text', { text: 'to be edited', source: 'cluster-test' });
    const kinds: [string, Record<string, unknown>, string][] = [
      ['sticker', { imageUrl: `data:image/png;base64,${png.toString('base64')}` }, 'sticker'],
      ['contact', { vcard: [{ fullName: 'Dora', phone: '5511987654321' }] }, 'contact'],
      ['poll', { question: 'Lunch?', options: ['Pizza', 'Sushi'] }, 'poll'],
      ['event', { name: 'Launch', startAt: '2026-12-01T19:00:00-03:00' }, 'event'],
      [
        'list',
        { contentText: 'Menu', buttonText: 'Open', sections: [{ title: 'S', rows: [{ id: 'r1', title: 'R1' }] }] },
        'interactive',
      ],
      ['carousel', { cards: [{ header: { title: 'Card' }, body: { text: 'Body' } }] }, 'interactive'],
      ['reaction', { messageId: text, reaction: '👍' }, 'reaction'],
      ['edit', { messageId: text, message: 'edited' }, 'message_edit'],
      ['forward', { messageId: text }, 'text'],
    ];
    const toId = await instanceId(to);
    const fromId = await instanceId(from);
    const exchange = (instance: string, id: string) =>
      (events.get(instance) ?? []).find((e) => e.event === 'message.exchange' && (e.data as { id: string }).id === id)
        ?.data as { message: { type: string; source: string } } | undefined;
    for (const [kind, body, type] of kinds) {
      const id = await post(kind, body);
      await until(() => exchange(toId, id) !== undefined, `the ${kind} on the other node`, 10_000);
      expect(exchange(toId, id)!.message.type, kind).to.equal(type);
    }
    await until(() => exchange(fromId, text) !== undefined, 'the labelled outgoing exchange', 10_000);
    expect(exchange(fromId, text)!.message.source).to.equal('cluster-test');
  });

  it('an Idempotency-Key retried through every node replays the first answer and sends once', async () => {
    await linkedVia(c.nodes[0]!, 'idem', '5511200000050');
    const peer = '5511200000051';
    const post = (via: NodeProcess, text: string) =>
      via.api.post(
        '/api/message/text/idem',
        { number: peer, text },
        { token: account, headers: { 'idempotency-key': 'cluster-order-1' } },
      );
    const first = await post(c.nodes[1]!, 'exactly once');
    expect(first.status, JSON.stringify(first.body)).to.equal(200);
    for (const via of c.nodes) {
      const again = await post(via, 'exactly once');
      expect(again.status, JSON.stringify(again.body)).to.equal(200);
      expect(again.headers.get('idempotent-replayed')).to.equal('true');
      expect(again.body.data.messageId).to.equal(first.body.data.messageId);
      expect((await post(via, 'another text')).status).to.equal(422);
    }
    const outbox = (await c.nodes[2]!.api.get(`/api/sandbox/outbox/idem?to=${peer}`, { token: account })).body
      .messages as { type: string }[];
    expect(outbox.filter((m) => m.type !== 'presence')).to.have.length(1);
  });

  it('an instance follows a channel owned on another node, through a third node, and receives its post', async () => {
    const { from, to } = pair!;
    const third = c.other(await ownerOf(from), await ownerOf(to));
    const call = async (op: string, name: string, body: Record<string, unknown>) => {
      const res = await third.api.post(`/api/newsletter/${op}/${name}`, body, { token: account });
      expect(res.status, `${op}: ${JSON.stringify(res.body)}`).to.equal(200);
      return res.body;
    };
    const { jid } = (await call('create', from, { name: 'Across nodes' })).channel as { jid: string };
    await call('follow', to, { jid });
    const posted = await call('publish', from, { jid, message: 'news for every node' });
    const toId = await instanceId(to);
    await until(
      () =>
        (events.get(toId) ?? []).some((e) => {
          const data = e.data as { id?: string; chat?: { jid: string; type: string } };
          return (
            e.event === 'message.exchange' && data.id === posted.data.messageId && data.chat?.type === 'newsletter'
          );
        }),
      'the post on the follower node',
      10000,
    );
  });

  it('a group created through a node that owns neither member: the member on another node joins and hears it', async () => {
    const { from, to, toNumber } = pair!;
    const [fromOwner, toOwner] = [await ownerOf(from), await ownerOf(to)];
    const neither = c.nodes.find((n) => n !== fromOwner && n !== toOwner)!;
    const created = await neither.api.post(
      `/api/group/create/${from}`,
      { subject: 'Across nodes', participants: [toNumber] },
      { token: account },
    );
    expect(created.status, JSON.stringify(created.body)).to.equal(200);
    const groupJid = created.body.group.groupJid as string;
    expect(created.body.group.members.map((m: { jid: string }) => m.jid)).to.include(`${toNumber}@s.whatsapp.net`);
    const toId = await instanceId(to);
    const flow = () =>
      (events.get(toId) ?? []).find(
        (e) => e.event === 'group.flow' && (e.data as { groupJid: string }).groupJid === groupJid,
      )?.data as { type: string; author: string } | undefined;
    await until(() => flow() !== undefined, 'group.flow on the member owned by another node', 10_000);
    expect(flow()).to.deep.include({ type: 'joined', author: '5511200000001@s.whatsapp.net' });
    const sent = await neither.api.post(
      `/api/message/text/${from}`,
      { number: groupJid, text: 'hello group' },
      { token: account },
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    await until(
      () =>
        (events.get(toId) ?? []).some(
          (e) =>
            e.event === 'message.exchange' &&
            (e.data as { id: string; chat: { jid: string } }).id === sent.body.data.messageId &&
            (e.data as { chat: { jid: string } }).chat.jid === groupJid,
        ),
      'the group message on the other node',
      10000,
    );
  });

  it('kill -9 of the owner: the instance is connected again on another node without a new link', async () => {
    const victim = await ownerOf('left');
    const id = await instanceId('left');
    await victim.kill9();
    c.remove(victim);
    await c.waitAllOwned(TEST_TTL_MS + 3000, [id]);
    await until(
      async () => (await c.store.instances.findById(id))!.connection.state === 'connected',
      'connected on the new owner',
      10000,
    );
    const after = await c.store.instances.findById(id);
    expect(after!.connection.numberJid).to.equal('5511200000001@s.whatsapp.net');
    const newOwner = await ownerOf('left');
    expect(newOwner.nodeId).not.to.equal(victim.nodeId);
    // It still sends and receives.
    const res = await c.nodes[0]!.api.post(
      '/api/sandbox/inbound/left',
      { from: '5511999000111', text: 'still there?' },
      { token: account },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    await until(
      () =>
        (events.get(id) ?? []).some(
          (e) => (e.data as { message?: { content: { text: string } } }).message?.content.text === 'still there?',
        ),
      'inbound after failover',
      10000,
    );
  });
});
