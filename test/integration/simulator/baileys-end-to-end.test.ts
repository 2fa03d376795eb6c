import { expect } from 'chai';
import { until } from '../../helpers/until.js';
import { createHash } from 'node:crypto';
import { pngImage, wavTone } from '../../helpers/media-fixtures.js';
import { startTestNode } from '../../helpers/test-node.js';
import type { TestNode } from '../../helpers/test-node.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';
import { WebhookReceiver } from '../../helpers/webhook-receiver.js';
import type { Received } from '../../helpers/webhook-receiver.js';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

describe('the Baileys driver end to end through the WhatsApp simulator (one node)', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  let node: TestNode;
  let hooks: WebhookReceiver;
  let account: string;
  let token: string;
  const me = '5511988880001';
  const alice = '5511988880002';
  const bob = '5511988880003';

  const events = (event: string): Received[] => hooks.received.filter((r) => r.body?.event === event);
  const exchanged = (pred: (m: any) => boolean) =>
    until(() => events('message.exchange').find((r) => pred(r.body.data)), 'a message.exchange', 15_000);
  const decrypted = (number: string, pred: (r: any) => boolean): Promise<any> =>
    until(async () => (await sim.control.received(number)).find(pred), `${number} decrypts it`, 15_000);

  before(async () => {
    sim = await startTestSimulator();
    hooks = await WebhookReceiver.start();
    node = await startTestNode({ ...sim.nodeEnv, ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
    account = await node.createAccount('acme');
    await sim.control.addPhone(me, 'Sales phone');
    await sim.control.addPhone(alice, 'Alice');
    await sim.control.addPhone(bob, 'Bob');
    token = await node.createInstance(account, {
      name: 'sales',
      settings: { autoRejectCalls: true, callRejectMessage: 'We cannot take calls here' },
      webhookEnabled: true,
      webhookURL: `${hooks.url}/hook`,
      webhookBase64: true,
      webhookEvents: ['message.exchange', 'message.status', 'instance.state', 'call.update', 'group.flow'],
    });
  });

  after(async () => {
    await node?.stop();
    await sim?.close();
    await hooks?.stop();
  });

  it('links by QR: the phone scans, the node restarts its socket (515) and the instance is connected', async () => {
    const qr = await node.api.get('/api/instance/connect/sales', { token });
    expect(qr.status, JSON.stringify(qr.body)).to.equal(200);
    expect(qr.body.status).to.equal('qr');
    const scan = await sim.control.ok('POST', `/phones/${me}/scan`, { qr: qr.body.qrCode });
    expect(scan.device).to.match(new RegExp(`^${me}:\\d+@s\\.whatsapp\\.net$`));
    await until(
      async () => {
        const list = await node.api.get('/api/instance/list', { token });
        return list.body.instances?.[0]?.connection?.state === 'connected';
      },
      'connected',
      15_000,
    );
    const devices = await sim.control.ok<any[]>('GET', '/devices');
    const companion = devices.find((d) => d.jid === scan.device);
    expect(companion.connection).to.not.equal(null);
    expect(companion.history.map((h: any) => h.kind)).to.include.members(['registered', 'login']);
    await until(
      () => events('instance.state').find((r) => r.body.data.state === 'connected'),
      'instance.state connected on the webhook',
      15_000,
    );
    const listed = (await node.api.get('/api/instance/list', { token })).body.instances[0];
    expect(listed.profile).to.deep.include({ isBusiness: false, businessName: null });
  });

  it('a WhatsApp Business number: the instance list says so and gives the business name', async () => {
    const shop = '5511988880009';
    await sim.control.ok('POST', '/phones', { number: shop, business: { name: 'Padaria Central' } });
    const shopToken = await node.createInstance(account, { name: 'shop' });
    const qr = await node.api.get('/api/instance/connect/shop', { token: shopToken });
    await sim.control.ok('POST', `/phones/${shop}/scan`, { qr: qr.body.qrCode });
    const listed = await until(
      async () => {
        const i = (await node.api.get('/api/instance/list', { token: shopToken })).body.instances?.[0];
        return i?.connection?.state === 'connected' ? i : undefined;
      },
      'the business number connected',
      15_000,
    );
    expect(listed.profile).to.deep.include({ isBusiness: true, businessName: 'Padaria Central' });
  });

  it('sends a text that the contact decrypts and receives the reply on the webhook; receipts become message.status', async () => {
    const sent = await node.api.post('/api/message/text/sales', { number: alice, text: 'hello Alice' }, { token });
    expect(sent.status, JSON.stringify(sent.body)).to.equal(200);
    const got = await decrypted(alice, (r) => r.text === 'hello Alice');
    expect(got.from).to.equal(`${me}@s.whatsapp.net`);
    expect(got.connection).to.match(/^c\d+$/);
    // The account's own phone gets the copy a linked device sends it.
    const copy = await decrypted(me, (r) => r.text === 'hello Alice');
    expect(copy.fromMe).to.equal(true);
    const status = (state: string) =>
      until(
        () =>
          events('message.status').find((r) => r.body.data.messageIds.includes(got.id) && r.body.data.status === state),
        state,
        15_000,
      );
    await status('delivered');
    await sim.control.ok('POST', `/phones/${alice}/read`, { ids: [got.id] });
    await status('read');

    const { id } = await sim.control.send(alice, { to: me, text: 'hi back' });
    const hook = await exchanged((m) => m.id === id);
    expect(hook.body.data.direction).to.equal('incoming');
    expect(hook.body.data.message.content).to.deep.equal({ text: 'hi back' });
    expect(hook.body.data.sender.jid).to.equal(`${alice}@s.whatsapp.net`);
    // The account's own phone reads it: the instance (a linked device) learns it as read_self.
    await decrypted(me, (r) => r.id === id);
    await sim.control.ok('POST', `/phones/${me}/read`, { ids: [id] });
    const own = await until(
      () => events('message.status').find((r) => r.body.data.messageIds.includes(id)),
      'read_self',
      15_000,
    );
    expect(own.body.data).to.include({ status: 'read_self', recipient: `${alice}@s.whatsapp.net` });
    expect(await sim.control.failures(alice)).to.deep.equal([]);
  });

  it('sends media, location, contact, poll and reaction that the phone decrypts, and receives them the same way', async () => {
    const png = await pngImage(64, 48);
    const img = await node.api.post(
      '/api/message/media/sales',
      { number: alice, type: 'image', base64: png.toString('base64'), caption: 'a picture' },
      { token },
    );
    expect(img.status, JSON.stringify(img.body)).to.equal(200);
    const image = await decrypted(alice, (r) => r.type === 'image' && r.caption === 'a picture');
    expect(image.media.error).to.equal(undefined);
    expect(image.media.sha256).to.be.a('string');

    const doc = Buffer.from('%PDF-1.4\n% a tiny document\n');
    expect(
      (
        await node.api.post(
          '/api/message/media/sales',
          { number: alice, type: 'document', base64: doc.toString('base64'), fileName: 'a.pdf' },
          { token },
        )
      ).status,
    ).to.equal(200);
    const document = await decrypted(alice, (r) => r.type === 'document');
    expect(document.media.sha256).to.equal(sha256(doc));

    expect(
      (
        await node.api.post(
          '/api/message/location/sales',
          { number: alice, latitude: -23.5, longitude: -46.6, name: 'Office' },
          { token },
        )
      ).status,
    ).to.equal(200);
    const place = await decrypted(alice, (r) => r.type === 'location');
    expect(place.location).to.deep.include({ latitude: -23.5, longitude: -46.6, name: 'Office' });

    expect(
      (
        await node.api.post(
          '/api/message/contact/sales',
          { number: alice, vcard: [{ fullName: 'Zé', phone: '5511900000009' }] },
          { token },
        )
      ).status,
    ).to.equal(200);
    expect(
      (await decrypted(alice, (r) => r.type === 'contact' || r.type === 'contacts')).contact[0].displayName,
    ).to.equal('Zé');

    const poll = await node.api.post(
      '/api/message/poll/sales',
      { number: alice, question: 'Lunch?', options: ['pizza', 'sushi'] },
      { token },
    );
    expect(poll.status, JSON.stringify(poll.body)).to.equal(200);
    const pollRecord = await decrypted(alice, (r) => r.type === 'poll');
    expect(pollRecord.poll).to.deep.include({ name: 'Lunch?', options: ['pizza', 'sushi'] });

    expect(
      (
        await node.api.post(
          '/api/message/reaction/sales',
          { number: alice, messageId: pollRecord.id, reaction: '👍' },
          { token },
        )
      ).status,
    ).to.equal(200);
    expect((await decrypted(alice, (r) => r.type === 'reaction')).reaction).to.deep.equal({
      messageId: pollRecord.id,
      emoji: '👍',
    });

    // Now the phone sends each kind to the instance.
    const wav = wavTone(0.2);
    const inbound = [
      [{ media: { kind: 'image', base64: png.toString('base64'), caption: 'from Alice' } }, 'image'],
      [
        { media: { kind: 'audio', base64: wav.toString('base64'), mimetype: 'audio/ogg; codecs=opus', ptt: true } },
        'audio',
      ],
      [
        { media: { kind: 'document', base64: doc.toString('base64'), fileName: 'b.pdf', mimetype: 'application/pdf' } },
        'document',
      ],
      [{ location: { latitude: 1.5, longitude: 2.5, name: 'Beach' } }, 'location'],
      [{ contact: { name: 'Ana', number: '5511900000010' } }, 'contact'],
      [
        { reaction: { messageId: img.body.data?.id ?? img.body.messageId ?? image.id, emoji: '❤️', fromMe: false } },
        'reaction',
      ],
      [{ pollVote: { pollId: pollRecord.id, options: ['sushi'] } }, 'poll_vote'],
      [{ buttonReply: { id: 'b1', text: 'Yes' } }, 'buttons_response'],
      [{ listReply: { id: 'r1', title: 'Row one' } }, 'list_response'],
    ] as const;
    for (const [body, type] of inbound) {
      const { id } = await sim.control.send(alice, { to: me, ...body });
      const hook = await exchanged((m) => m.id === id);
      expect(hook.body.data.message.type, JSON.stringify(body)).to.equal(type);
      if ('media' in body) {
        // Downloaded by the owner from the simulator's media endpoint and decrypted (base64 webhook).
        const media = hook.body.data.message.media;
        expect(media.error ?? null, JSON.stringify(media)).to.equal(null);
        expect(sha256(Buffer.from(media.base64, 'base64'))).to.equal(sha256(Buffer.from(body.media.base64, 'base64')));
        // The hosted product's media type: a voice note (the ptt flag on the wire) is `ptt`.
        expect(media).to.include({ type: 'ptt' in body.media ? 'ptt' : type, kind: type });
      }
      if (type === 'poll_vote') expect(JSON.stringify(hook.body.data.message.pollVote)).to.include('sushi');
    }
    expect(await sim.control.failures(alice)).to.deep.equal([]);
  });

  it('holds a group conversation: created by the node, read by both phones, answered by one', async () => {
    const created = await node.api.post(
      '/api/group/create/sales',
      { subject: 'Team', participants: [alice, bob] },
      { token },
    );
    expect(created.status, JSON.stringify(created.body)).to.be.oneOf([200, 201]);
    const groups = await sim.control.ok<any[]>('GET', '/groups');
    const group = groups.find((g) => g.subject === 'Team');
    expect(group.participants.map((p: any) => p.jid)).to.have.members(
      [me, alice, bob].map((n) => `${n}@s.whatsapp.net`),
    );
    expect(
      (await node.api.post('/api/message/text/sales', { number: group.jid, text: 'welcome all' }, { token })).status,
    ).to.equal(200);
    for (const phone of [alice, bob]) {
      const r = await decrypted(phone, (x) => x.text === 'welcome all');
      expect(r.chat).to.equal(group.jid);
    }
    const { id } = await sim.control.send(bob, { to: group.jid, text: 'thanks!' });
    const hook = await exchanged((m) => m.id === id);
    expect(hook.body.data.chat.type).to.equal('group');
    expect(hook.body.data.sender.jid).to.equal(`${bob}@s.whatsapp.net`);
    expect(await sim.control.failures(bob)).to.deep.equal([]);
  });

  it('rejects a call with autoRejectCalls and sends callRejectMessage', async () => {
    const { callId } = await sim.control.ok('POST', `/phones/${alice}/call`, { to: me });
    await until(
      () => events('call.update').find((r) => JSON.stringify(r.body).includes(callId)),
      'call.update',
      15_000,
    );
    await until(
      async () =>
        (await sim.control.ok<any[]>('GET', `/phones/${alice}/calls`)).find(
          (c) => c.action === 'reject' && c.callId === callId,
        ),
      'the reject reaches the caller',
      15_000,
    );
    await decrypted(alice, (r) => r.text === 'We cannot take calls here');
  });

  it('resumes the session after the node restarts, without a new QR', async () => {
    const before = (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === me && !d.phone);
    const dir = node.dataDir;
    await node.stop({ keepData: true });
    node = await startTestNode({ ...sim.nodeEnv, ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' }, dir);
    await until(
      async () =>
        (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'connected',
      'reconnected',
      30_000,
    );
    const after = (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === me && !d.phone);
    expect(after.jid).to.equal(before.jid);
    expect(after.history.filter((h: any) => h.kind === 'registered')).to.have.length(1);
    const { id } = await sim.control.send(alice, { to: me, text: 'still there?' });
    await exchanged((m) => m.id === id);
    expect((await node.api.post('/api/message/text/sales', { number: alice, text: 'yes' }, { token })).status).to.equal(
      200,
    );
    await decrypted(alice, (r) => r.text === 'yes');
    expect(await sim.control.failures(alice)).to.deep.equal([]);
  });

  it('logout by the API unlinks the device at WhatsApp; the next connect links again by pairing code', async () => {
    const out = await node.api.post('/api/instance/logout/sales', {}, { token });
    expect(out.status, JSON.stringify(out.body)).to.equal(200);
    await until(
      async () =>
        (await sim.control.ok<any[]>('GET', '/devices')).some(
          (d) => d.account === me && !d.phone && !d.linked && d.history.some((h: any) => h.kind === 'unlinked'),
        ),
      'unlinked',
      15_000,
    );
    const code = await node.api.get(`/api/instance/connect/sales?number=${me}`, { token });
    expect(code.status, JSON.stringify(code.body)).to.equal(200);
    expect(code.body.pairingCode).to.match(/^[A-Z0-9]{8}$/);
    await sim.control.ok('POST', `/phones/${me}/pair`, { code: code.body.pairingCode });
    await until(
      async () =>
        (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'connected',
      'connected again',
      15_000,
    );
  });

  it('logout by the phone (401) marks the instance logged out', async () => {
    const companion = (await sim.control.ok<any[]>('GET', '/devices')).find(
      (d) => d.account === me && !d.phone && d.linked,
    );
    await sim.control.ok('POST', `/phones/${me}/unlink`, { jid: companion.jid });
    await until(() => events('instance.state').find((r) => r.body.data.state === 'logged_out'), 'logged_out', 15_000);
    await until(
      async () =>
        (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'loggedout',
      'list says loggedout',
      15_000,
    );
  });
});
