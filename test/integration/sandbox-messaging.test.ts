import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { until } from '../helpers/until.js';

/** Collects every envelope published for an instance, the way WebSocket fan-out receives them. */
async function record(node: TestNode, name: string, token: string) {
  const list = await node.api.get('/api/instance/list', { token });
  const instance = (await node.store.instances.findByTokenHash(
    (await import('../../src/security/tokens.js')).hashToken(token),
  ))!;
  expect(list.body.instances[0].name).to.equal(name);
  const events: EventEnvelope[] = [];
  await node.runtime.events.subscribe(instance.id, (e) => events.push(e));
  return events;
}

describe('sandbox messaging end to end (one embedded node)', function () {
  this.timeout(30_000);
  let node: TestNode;
  let account: string;

  before(async () => {
    node = await startTestNode({ RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '1000' });
    account = await node.createAccount('acme');
  });

  after(async () => {
    await node.stop();
  });

  async function linked(name: string, number: string, settings: Record<string, unknown> = {}) {
    const token = await node.createInstance(account, { name, settings });
    const events = await record(node, name, token);
    const qr = await node.api.get(`/api/instance/connect/${name}`, { token });
    expect(qr.status, JSON.stringify(qr.body)).to.equal(200);
    const link = await node.api.post(`/api/sandbox/link/${name}`, { number }, { token });
    expect(link.status, JSON.stringify(link.body)).to.equal(200);
    return { token, events };
  }

  it('create → connect (QR) → link → inbound message: instance.state and message events with the documented layout', async () => {
    const token = await node.createInstance(account, { name: 'sales' });
    const events = await record(node, 'sales', token);

    const qr = await node.api.get('/api/instance/connect/sales', { token });
    expect(qr.status).to.equal(200);
    expect(qr.body).to.include({ success: true, status: 'qr' });
    expect(qr.body.qrCode).to.be.a('string').and.not.be.empty;
    expect(qr.body.qrCodeBase64).to.match(/^data:image\/png;base64,[A-Za-z0-9+/=]+$/);

    const linkedRes = await node.api.post('/api/sandbox/link/sales', {}, { token: account });
    expect(linkedRes.status).to.equal(200);
    expect(linkedRes.body.numberJid).to.match(/^\d+@s\.whatsapp\.net$/);
    const again = await node.api.post('/api/sandbox/link/sales', {}, { token });
    expect(again.status).to.equal(409);
    expect(again.body.error.message).to.equal('Instance is not waiting for a link');

    const list = await node.api.get('/api/instance/list?instanceName=sales', { token: account });
    expect(list.body.instances[0].connection).to.deep.include({
      state: 'connected',
      numberJid: linkedRes.body.numberJid,
      lastError: null,
    });
    expect(list.body).to.deep.include({ status: 'connected' });
    expect(list.body.instances[0]).to.deep.include({ token, status: 'connected' });
    const connected = await node.api.get('/api/instance/connect/sales', { token });
    expect(connected.body).to.include({ status: 'connected', numberJid: linkedRes.body.numberJid });

    const inbound = await node.api.post(
      '/api/sandbox/inbound/sales',
      { from: '5511912345678', text: 'hello there', pushName: 'Ana' },
      { token },
    );
    expect(inbound.status, JSON.stringify(inbound.body)).to.equal(200);

    await until(() => events.some((e) => e.event === 'message.exchange'), 'message event');
    expect(
      events.filter((e) => e.event === 'instance.state').map((e) => (e.data as { state: string }).state),
    ).to.deep.equal(['qr_ready', 'connecting', 'connected']);
    // Our own names stay beside the hosted ones.
    expect(
      events
        .filter((e) => e.event === 'instance.state')
        .map((e) => (e.data as { connectionState: string }).connectionState),
    ).to.deep.equal(['qr', 'connecting', 'connected']);
    const state = events.find((e) => e.event === 'instance.state')!;
    expect(state.instanceData).to.deep.equal({ instance: 'sales', token, baseUrl: node.url });
    const message = events.find((e) => e.event === 'message.exchange')!.data as Record<string, any>;
    expect(message).to.deep.include({
      id: inbound.body.messageId,
      direction: 'incoming',
      recipient: '5511912345678@s.whatsapp.net',
    });
    expect(Date.parse(message.timestamp)).to.be.a('number').and.not.NaN;
    expect(message.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
    const chat = { jid: '5511912345678@s.whatsapp.net', lid: null, name: 'Ana', type: 'private', isCommunity: false };
    const sender = { jid: '5511912345678@s.whatsapp.net', lid: null, name: 'Ana' };
    expect(message.chat).to.deep.equal(chat);
    expect(message.sender).to.deep.equal(sender);
    // The hosted layout in `message`: the same id, direction, time and parties, the text in `content.text`.
    expect(message.message).to.deep.include({
      id: inbound.body.messageId,
      direction: 'incoming',
      timestamp: message.timestamp,
      chat,
      sender,
      type: 'text',
      content: { text: 'hello there' },
      text: 'hello there',
      isEdit: false,
      media: null,
      interactive: null,
    });
  });

  it('pairing code: connect with ?number= and link with that number', async () => {
    const token = await node.createInstance(account, { name: 'pairing' });
    const res = await node.api.get('/api/instance/connect/pairing?number=5521988887777', { token });
    expect(res.body).to.include({ status: 'pairing' });
    expect(res.body.pairingCode).to.match(/^[A-Z0-9]{8}$/);
    const link = await node.api.post('/api/sandbox/link/pairing', {}, { token });
    expect(link.body.numberJid).to.equal('5521988887777@s.whatsapp.net');
    expect((await node.api.get('/api/instance/connect/pairing?number=12', { token })).status).to.equal(400);
  });

  it('two sandbox instances exchange messages with delivery and read statuses', async () => {
    const a = await linked('alice', '5511000000001');
    const b = await linked('bob', '5511000000002', { autoReadMessages: true });
    const sent = await node.api.post(
      '/api/message/text/alice',
      { number: '5511000000002', message: 'hi bob' },
      { token: a.token },
    );
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    expect(sent.body).to.deep.include({ success: true, status: 'sent' });
    const id = sent.body.data.messageId as string;

    await until(() => b.events.some((e) => e.event === 'message.exchange'), "bob's message");
    const got = b.events.find((e) => e.event === 'message.exchange')!.data as Record<string, any>;
    expect(got).to.deep.include({ id, direction: 'incoming' });
    expect(got.message.content).to.deep.equal({ text: 'hi bob' });

    const statuses = () =>
      a.events.filter((e) => e.event === 'message.status').map((e) => (e.data as { status: string }).status);
    await until(() => statuses().includes('read'), 'read receipt (bob auto-reads)');
    expect(statuses()).to.deep.equal(['sent', 'delivered', 'read']);
    const stored = await node.api.get(`/api/chat/status/alice?messageId=${id}`, { token: a.token });
    expect(stored.body).to.deep.include({ status: 'read', status_code: 4, direction: 'sent' });
    const theirs = await node.api.get(`/api/chat/status/bob?messageId=${id}`, { token: b.token });
    expect(theirs.body).to.deep.include({ status: 'read', direction: 'received' });
    const outgoing = a.events.find((e) => e.event === 'message.exchange')!.data as Record<string, any>;
    expect(outgoing).to.deep.include({ id, direction: 'outgoing' });

    const outbox = await node.api.get('/api/sandbox/outbox/alice?to=5511000000002', { token: a.token });
    expect(outbox.body.messages).to.have.length(1);
    expect(outbox.body.messages[0]).to.deep.include({
      messageId: id,
      to: '5511000000002@s.whatsapp.net',
      type: 'text',
      text: 'hi bob',
    });
    expect(
      (await node.api.get(`/api/sandbox/outbox/alice?after=${id}`, { token: a.token })).body.messages,
    ).to.deep.equal([]);
  });

  it('applies the settings: group and status messages ignored, calls rejected with the message', async () => {
    const c = await linked('carol', '5511000000003', {
      ignoreGroupMessages: true,
      autoRejectCalls: true,
      callRejectMessage: 'busy, text me',
    });
    await node.api.post(
      '/api/sandbox/inbound/carol',
      { from: '5511999990000', text: 'in a group', groupJid: '120363000000000001@g.us' },
      { token: c.token },
    );
    await node.api.post('/api/sandbox/inbound/carol', { from: '5511999990000', text: 'direct' }, { token: c.token });
    const call = await node.api.post('/api/sandbox/call/carol', { from: '5511999990000' }, { token: c.token });
    expect(call.status).to.equal(200);
    await until(() => c.events.filter((e) => e.event === 'call.update').length >= 2, 'call offer and rejection');
    const texts = c.events
      .filter((e) => e.event === 'message.exchange')
      .map((e) => (e.data as any).message.content.text);
    expect(texts).to.include('direct').and.not.include('in a group');
    expect(
      c.events.filter((e) => e.event === 'call.update').map((e) => (e.data as { status: string }).status),
    ).to.deep.equal(['offer', 'rejected']);
    const outbox = (await node.api.get('/api/sandbox/outbox/carol', { token: c.token })).body.messages as {
      type: string;
      text?: string;
    }[];
    expect(outbox.map((m) => m.type)).to.deep.equal(['call_reject', 'text']);
    expect(outbox[1]!.text).to.equal('busy, text me');

    // Turned off live: the next group message is delivered.
    const upd = await node.api.post('/api/instance/settings/carol', { ignoreGroupMessages: false }, { token: c.token });
    expect(upd.status).to.equal(200);
    await node.api.post(
      '/api/sandbox/inbound/carol',
      { from: '5511999990000', text: 'group again', groupJid: '120363000000000001@g.us' },
      { token: c.token },
    );
    await until(
      () => c.events.some((e) => (e.data as any).message?.content.text === 'group again'),
      'group message after the change',
    );
  });

  it('groups and labels seeded on the phone produce group.flow and label.update', async () => {
    const d = await linked('dave', '5511000000004');
    const group = await node.api.post(
      '/api/sandbox/group/dave',
      { subject: 'Team', participants: [{ number: '5511000000009', admin: true }] },
      { token: d.token },
    );
    expect(group.status).to.equal(201);
    expect(group.body.group.jid).to.match(/@g\.us$/);
    const labels = await node.api.post(
      '/api/sandbox/labels/dave',
      { chat: '5511000000009', labels: [{ id: '1', name: 'VIP' }] },
      { token: d.token },
    );
    expect(labels.status).to.equal(200);
    await until(() => d.events.some((e) => e.event === 'label.update'), 'label event');
    const flow = d.events.find((e) => e.event === 'group.flow')!.data as Record<string, any>;
    expect(flow).to.deep.include({ groupJid: group.body.group.jid, type: 'joined', groupName: 'Team' });
    expect(flow.participants.map((p: { jid: string }) => p.jid)).to.deep.equal([
      '5511000000004@s.whatsapp.net',
      '5511000000009@s.whatsapp.net',
    ]);
    expect(d.events.find((e) => e.event === 'label.update')!.data).to.deep.include({
      chat: '5511000000009@s.whatsapp.net',
      action: 'add',
      labels: [{ id: '1', name: 'VIP' }],
    });
  });

  it('logout unlinks (state loggedout, no number); reconnect then needs a new link; sends need a connection', async () => {
    const e = await linked('erin', '5511000000005');
    const out = await node.api.post('/api/instance/logout/erin', undefined, { token: e.token });
    expect(out.body).to.deep.include({
      success: true,
      instance: { name: 'erin', state: 'loggedout', status: 'loggedout' },
    });
    const list = await node.api.get('/api/instance/list?instanceName=erin', { token: account });
    expect(list.body.instances[0].connection).to.deep.include({ state: 'loggedout', numberJid: null, lastError: null });
    expect(list.body.instances[0].status).to.equal('loggedout');
    const send = await node.api.post(
      '/api/message/text/erin',
      { number: '5511000000001', text: 'x' },
      { token: e.token },
    );
    expect(send.status).to.equal(400);
    expect(send.body.error.message).to.equal('Instance is not connected to WhatsApp');
    const rec = await node.api.post('/api/instance/reconnect/erin', undefined, { token: e.token });
    expect(rec.status).to.equal(400);
  });

  it('refuses bad send bodies with the spec messages', async () => {
    const token = await node.createInstance(account, { name: 'frank' });
    const post = (body: unknown) => node.api.post('/api/message/text/frank', body, { token });
    expect((await post({ text: 'x' })).body.error.message).to.equal('Number is required');
    expect((await post({ number: '5511999990000' })).body.error.message).to.equal('Message is required');
    const invalid = 'Invalid number: expected digits with the country code (an optional +) or a JID';
    for (const number of ['abc', '-----------@g.us', '-5511912345678', '--@s.whatsapp.net']) {
      const res = await post({ number, text: 'x' });
      expect(res.status, number).to.equal(400);
      expect(res.body.error.message, number).to.equal(invalid);
    }
    expect((await post({ number: '5511999990000', text: 'x', message: 'y' })).status).to.equal(400);
    expect((await post({ number: '5511999990000', text: 'x', extra: 1 })).status).to.equal(400);
  });
});
