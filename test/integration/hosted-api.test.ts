import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { hashToken } from '../../src/security/tokens.js';
import { pngImage } from '../helpers/media-fixtures.js';
import { until } from '../helpers/until.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectError, expectOk } from './support.js';

const ALICE = '5511830000001';
const BOB = '5511830000002';
const BOB_JID = `${BOB}@s.whatsapp.net`;

/**
 * The calls of the hosted product's clients that failed before (issue 38): each sends the body the
 * hosted product's documentation shows and checks the fields its answer names.
 */
describe("hosted product's clients: delay in seconds, presence state, reaction remove, base64, markRead, form, list", function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: string;
  let bob: string;
  let bobEvents: EventEnvelope[];

  const post = (path: string, body: unknown, token = alice) => n.node.api.post(`${path}/alice`, body, { token });
  const get = (path: string, token = alice) => n.node.api.get(path, { token });
  /** Bob sends alice something through the sandbox; its message id once alice has it. */
  const inbound = async (body: Record<string, unknown>) => {
    const res = await n.node.api.post('/api/sandbox/inbound/alice', { from: BOB, ...body }, { token: alice });
    expectOk(res);
    return res.body.messageId as string;
  };

  before(async () => {
    n = await startNetworkNode();
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    bobEvents = await n.record(bob);
  });

  after(async () => {
    await n?.stop();
  });

  it('delay is in seconds: "typing…" for that long first; delayMs keeps milliseconds', async () => {
    let started = Date.now();
    const res = await post('/api/message/text', { number: BOB, message: 'one moment', delay: 1 });
    expectOk(res);
    expect(Date.now() - started).to.be.at.least(1000);
    let [presence, text] = (await n.outbox('alice', alice, BOB)).slice(-2);
    expect(presence).to.deep.include({ type: 'presence', presence: 'composing' });
    expect(text).to.deep.include({ type: 'text', messageId: res.body.data.messageId });
    expect(text.timestamp - presence.timestamp).to.be.at.least(1000);

    started = Date.now();
    expectOk(await post('/api/message/text', { number: BOB, message: 'quick', delayMs: 200 }));
    const took = Date.now() - started;
    expect(took).to.be.at.least(200).and.below(1000);
    [presence, text] = (await n.outbox('alice', alice, BOB)).slice(-2);
    expect(text.timestamp - presence.timestamp).to.be.at.least(200);

    expectError(
      await post('/api/message/text', { number: BOB, message: 'x', delay: 3000 }),
      400,
      'Invalid request body: delay must be from 0 to 30 seconds',
    );
  });

  it('presence takes state (typing, recording, pause; any case) and duration in seconds', async () => {
    const res = await post('/api/chat/presence', { number: BOB, state: 'Typing', duration: 1 });
    expectOk(res);
    expect(res.body).to.deep.include({ chat_jid: BOB_JID, state: 'typing', presence: 'composing', duration: 1 });
    expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ type: 'presence', presence: 'composing' });
    const shownAt = Date.now();
    await until(
      async () => (await n.outbox('alice', alice, BOB)).at(-1)?.presence === 'paused',
      'paused after the duration',
      5000,
    );
    expect(Date.now() - shownAt).to.be.at.least(800);

    // Over 60 s is cut to 60; a pause ignores the duration.
    const long = await post('/api/chat/presence', { number: BOB, state: 'recording', duration: 600 });
    expect(long.body).to.deep.include({ state: 'recording', duration: 60 });
    const pause = await post('/api/chat/presence', { number: BOB, state: 'pause', duration: 5 });
    expectOk(pause);
    expect(pause.body).to.deep.include({ state: 'pause', presence: 'paused', duration: 0 });
    expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ presence: 'paused' });

    expectError(
      await post('/api/chat/presence', { number: BOB }),
      400,
      "State is required. Use 'typing', 'recording', or 'pause'",
    );
    expectError(
      await post('/api/chat/presence', { number: BOB, state: 'dancing' }),
      400,
      "Invalid state. Use 'typing', 'recording', or 'pause'",
    );
    expectError(await post('/api/chat/presence', { state: 'typing' }), 400, 'Number is required');
  });

  it('a reaction is removed with "remove"', async () => {
    const hello = await inbound({ text: 'hello' });
    const set = await post('/api/message/reaction', { number: BOB, messageId: hello, reaction: '❤️' });
    expectOk(set);
    expect(set.body.data).to.deep.include({ messageType: 'reaction', content: '❤️', replyTo: { messageId: hello } });
    const removed = await post('/api/message/reaction', { number: BOB, messageId: hello, reaction: 'remove' });
    expectOk(removed);
    expect(removed.body.message).to.equal('Reaction removed successfully');
    expect(removed.body.data).to.deep.include({ content: '', replyTo: { messageId: hello } });
    expect(removed.body.data.messageId).to.be.a('string').and.not.equal(hello);
    expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({
      type: 'reaction',
      reaction: { messageId: hello, emoji: '' },
    });
  });

  it('GET /api/chat/base64 gives a received file as base64', async () => {
    const image = await pngImage(40, 30);
    const id = await inbound({
      media: { kind: 'image', mimetype: 'image/png', fileName: 'p.png', base64: image.toString('base64') },
    });
    const res = await get(`/api/chat/base64/alice?messageId=${id}`);
    expectOk(res);
    expect(res.body).to.deep.include({
      message_id: id,
      mime_type: 'image/png',
      media_type: 'image',
      base64: image.toString('base64'),
    });
    const text = await inbound({ text: 'no file' });
    for (const messageId of [text, 'NOPE']) {
      expectError(
        await get(`/api/chat/base64/alice?messageId=${messageId}`),
        404,
        'Message not found or no media available',
      );
    }
    expectError(await get('/api/chat/base64/alice'), 400, 'messageId query parameter is required');
  });

  it('POST /api/chat/markRead marks one message read; the sender gets its read receipt', async () => {
    const id = await inbound({ text: 'read me' });
    const res = await post('/api/chat/markRead', { number: BOB, messageId: id });
    expectOk(res);
    expect(res.body).to.deep.include({
      message: 'Message marked as read successfully',
      message_id: id,
      chat_jid: BOB_JID,
    });
    await until(
      () =>
        bobEvents.some(
          (e) =>
            e.event === 'message.status' &&
            (e.data as any).status === 'read' &&
            (e.data as any).messageIds.includes(id),
        ),
      'read receipt at bob',
      3000,
    );
    const status = await get(`/api/chat/status/alice?messageId=${id}`);
    expect(status.body.status).to.equal('read');

    expectError(await post('/api/chat/markRead', { number: BOB }), 400, 'messageId is required');
    expectError(await post('/api/chat/markRead', { messageId: id }), 400, 'Number is required');
    expectError(
      await post('/api/chat/markRead', { number: '120363000000000001@g.us', messageId: 'UNKNOWN' }),
      400,
      'sender is required for group messages',
    );
  });

  it('POST /api/message/form sends a native-flow form', async () => {
    const res = await post('/api/message/form', {
      number: BOB,
      message: 'Leave us your details',
      formType: 'contact_details',
      buttonLabel: 'Fill in',
      flowToken: 'lead-42',
      emailVisible: true,
      delay: 0,
    });
    expectOk(res);
    expect(res.body.data).to.deep.include({ messageType: 'form', content: 'Leave us your details', to: BOB_JID });
    const sent = (await n.outbox('alice', alice, BOB)).at(-1);
    expect(sent).to.deep.include({ type: 'form', text: 'Leave us your details' });
    expect(sent.form.params).to.deep.include({ flow_token: 'lead-42', flow_cta: 'Fill in', flow_action: 'navigate' });
    expect(sent.form.params.flow_action_payload.data).to.deep.include({ email_visible: true });

    const custom = await post('/api/message/form', {
      number: BOB,
      message: 'Custom flow',
      buttonParamsJSON: JSON.stringify({ flow_id: '123', flow_cta: 'Open' }),
    });
    expectOk(custom);
    expect((await n.outbox('alice', alice, BOB)).at(-1).form.params).to.deep.equal({
      flow_id: '123',
      flow_cta: 'Open',
    });

    expectError(
      await post('/api/message/form', { number: BOB, message: 'x', buttonParamsJSON: '[1]' }),
      400,
      'Invalid request body: buttonParamsJSON must be a JSON object',
    );
    expectError(await post('/api/message/form', { number: BOB }), 400, 'Message is required');
    expectError(await post('/api/message/form', { message: 'x' }), 400, 'Number is required');
  });

  it('PIX takes message and items[]', async () => {
    const res = await post('/api/message/pix', {
      number: BOB,
      merchantName: 'Loja',
      pixKey: '11144477735',
      pixKeyType: 'CPF',
      message: 'Pedido 42',
      items: [{ name: 'Camiseta', description: 'M', quantity: 2, unitPrice: 49.9 }],
    });
    expectOk(res);
    expect(res.body.data.content).to.equal('Pedido 42');
    expect((await n.outbox('alice', alice, BOB)).at(-1).payment).to.deep.include({
      message: 'Pedido 42',
      items: [{ name: 'Camiseta', description: 'M', quantity: 2, unitPrice: 49.9 }],
    });
  });

  it('GET /api/instance/list gives each instance its token and status, and a top-level status', async () => {
    const all = await get('/api/instance/list', n.account);
    expectOk(all);
    expect(all.body.status).to.equal('found');
    const byName = new Map((all.body.instances as any[]).map((i) => [i.name, i]));
    expect(byName.get('alice')).to.deep.include({ token: alice, status: 'connected' });
    expect(byName.get('bob')).to.deep.include({ token: bob, status: 'connected' });
    expect(byName.get('alice').connection).to.include.keys('state', 'numberJid', 'presenceStatus', 'displayStatus');
    // The sandbox's numbers are personal accounts; a never-connected instance's is not known yet.
    expect(byName.get('alice').profile).to.deep.include({ isBusiness: false, businessName: null });
    expect(byName.get('alice').profile).to.include.keys('name', 'pictureUrl');

    const idle = await n.idle('idle-one');
    const one = await get('/api/instance/list?instanceName=idle-one', n.account);
    expect(one.body).to.deep.include({ message: '1 Instance found', status: 'disconnected' });
    expect(one.body.instances[0]).to.deep.include({ name: 'idle-one', token: idle, status: 'disconnected' });
    expect(one.body.instances[0].profile).to.deep.include({ isBusiness: null, businessName: null });
    // A client finds its instance by the token it holds.
    const own = await get('/api/instance/list', idle);
    expect(own.body.instances.map((i: any) => i.token)).to.deep.equal([idle]);

    expectError(await get('/api/instance/list?instanceName=nowhere', n.account), 404, 'Instance not found');
    const skipped = await get('/api/instance/list?instanceName=nowhere,idle-one', n.account);
    expect(skipped.body.instances.map((i: any) => i.name)).to.deep.equal(['idle-one']);
  });

  it('the token the list shows is stored sealed (AES-256-GCM), never in clear', async () => {
    const record = (await n.node.store.instances.findByTokenHash(hashToken(alice)))!;
    expect(record.tokenSealed).to.match(/^v1:/);
    expect(record.tokenSealed).to.not.include(alice);
    expect(JSON.stringify(record)).to.not.include(alice);
  });
});
