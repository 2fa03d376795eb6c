import { expect } from 'chai';
import { hashToken } from '../../src/security/tokens.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

describe('webhooks (embedded mode: the store outbox)', function () {
  this.timeout(30_000);
  let node: TestNode;
  let account: string;
  let receiver: WebhookReceiver;

  before(async () => {
    node = await startTestNode({
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000',
      WEBHOOK_RETRY_BASE_MS: '50',
      WEBHOOK_RETRY_MAX_MS: '200',
      WEBHOOK_MAX_ATTEMPTS: '4',
      WEBHOOK_TIMEOUT_MS: '1000',
      WEBHOOK_LEASE_MS: '3000',
    });
    account = await node.createAccount('hooks');
  });

  beforeEach(async () => {
    receiver = await WebhookReceiver.start();
  });

  afterEach(async () => {
    await receiver.stop();
  });

  after(async () => {
    await node.stop();
  });

  /** A whole `crm` webhook, as an update must send it (the same label overwrites every field). */
  const crmWebhook = () => ({
    label: 'crm',
    url: `${receiver.url}/crm`,
    authorization: 'Bearer s3cret',
    byEvents: true,
    events: ['message.exchange'],
    mediaBase64: true,
  });

  /** A linked sandbox instance whose default webhook points at the receiver. */
  async function instance(name: string, hook: Record<string, unknown> = {}) {
    const token = await node.createInstance(account, { name, webhookEnabled: true, webhookURL: receiver.url, ...hook });
    await node.api.get(`/api/instance/connect/${name}`, { token });
    const link = await node.api.post(`/api/sandbox/link/${name}`, {}, { token });
    expect(link.status).to.equal(200);
    return { token, numberJid: link.body.numberJid as string };
  }

  it('configures webhooks by label: create, update, read (aliases), delete; the authorization shown as set', async () => {
    const token = await node.createInstance(account, { name: 'config-a' });
    const created = await node.api.post(
      '/api/events/webhook/config-a',
      {
        label: 'crm',
        url: `${receiver.url}/crm`,
        authorization: 'Bearer s3cret',
        events: ['message.exchange'],
        mediaBase64: true,
      },
      { token },
    );
    expect(created.status, JSON.stringify(created.body)).to.equal(201);
    expect(created.body.webhook).to.deep.include({
      label: 'crm',
      enabled: true,
      byEvents: false,
      events: ['message.exchange'],
      mediaBase64: true,
      base64: true,
      authorization: 'Bearer s3cret',
      hasAuthorization: true,
    });
    // The same label overwrites every field (catalog): an update sends the whole webhook.
    const updated = await node.api.post('/api/events/webhook/config-a', crmWebhook(), { token });
    expect(updated.status).to.equal(200);
    expect(updated.body.webhook).to.deep.include({
      byEvents: true,
      events: ['message.exchange'],
      authorization: 'Bearer s3cret',
      hasAuthorization: true,
    });
    // Stored sealed, shown opened: the hosted product's webhook view, on both read paths.
    const owner = await node.store.instances.findByTokenHash(hashToken(token));
    const [sealed] = await node.store.webhooks.list(owner!.id);
    expect(sealed!.authorizationSealed).to.be.a('string').and.not.include('s3cret');
    for (const path of ['/api/events/getWebhook/config-a?label=crm', '/api/events/webhook/config-a?label=crm']) {
      const read = await node.api.get(path, { token });
      expect(read.body.webhook).to.deep.include({
        label: 'crm',
        url: `${receiver.url}/crm`,
        authorization: 'Bearer s3cret',
        byEvents: true,
        mediaBase64: true,
      });
    }
    const all = await node.api.get('/api/events/getWebhook/config-a', { token });
    expect(all.body.webhooks).to.have.length(1);
    expect((await node.api.get('/api/events/getWebhook/config-a?label=nope', { token })).status).to.equal(404);
    // The hosted product's form without :instance, with a TokenInstance.
    const bare = await node.api.post('/api/events/webhook', { url: receiver.url }, { token });
    expect(bare.status).to.equal(201);
    expect(bare.body.webhook.label).to.equal('default');
    expect(
      (await node.api.post('/api/events/webhook', { url: receiver.url }, { token: account })).body.error.message,
    ).to.equal('Instance name is required');
    const del = await node.api.delete('/api/events/webhook/config-a?label=crm', { token });
    expect(del.body).to.deep.include({ success: true });
    expect((await node.api.delete('/api/events/webhook/config-a?label=crm', { token })).status).to.equal(404);
  });

  it('a same-label POST overwrites every field: what it leaves out takes its default', async () => {
    const token = await node.createInstance(account, { name: 'config-ow' });
    const full = crmWebhook();
    expect((await node.api.post('/api/events/webhook/config-ow', full, { token })).status).to.equal(201);
    const res = await node.api.post(
      '/api/events/webhook/config-ow',
      { label: 'crm', url: `${receiver.url}/v2` },
      { token },
    );
    expect(res.status, JSON.stringify(res.body)).to.equal(200);
    const overwritten = {
      label: 'crm',
      enabled: true,
      url: `${receiver.url}/v2`,
      authorization: '',
      hasAuthorization: false,
      byEvents: false,
      events: [],
      mediaBase64: false,
      base64: false,
      hasSecret: true,
    };
    expect(res.body.webhook).to.deep.include(overwritten);
    expect((await node.api.get('/api/events/getWebhook/config-ow?label=crm', { token })).body.webhook).to.deep.include(
      overwritten,
    );
    // No merge with the stored url: an enabled webhook without one is refused, and nothing changes.
    const noUrl = await node.api.post('/api/events/webhook/config-ow', { label: 'crm', byEvents: true }, { token });
    expect(noUrl.status).to.equal(400);
    expect(noUrl.body.error.message).to.equal('url is required when the webhook is enabled');
    expect((await node.api.get('/api/events/getWebhook/config-ow?label=crm', { token })).body.webhook).to.deep.include(
      overwritten,
    );
  });

  it('enabled: false clears url, authorization, events and mediaBase64, keeps the row and its secret; it gets nothing', async () => {
    const { token } = await instance('disable-me', {
      webhookAuthorization: 'Bearer hook-secret',
      webhookEvents: ['message.exchange'],
      webhookMediaBase64: true,
    });
    const owner = await node.store.instances.findByTokenHash(hashToken(token));
    const before = (await node.store.webhooks.list(owner!.id)).find((w) => w.label === 'default')!;
    expect(before.secretSealed).to.be.a('string');
    const cleared = {
      label: 'default',
      enabled: false,
      url: '',
      authorization: '',
      hasAuthorization: false,
      events: [],
      mediaBase64: false,
      base64: false,
      hasSecret: true,
    };
    // Whatever else the body says, disabling clears those four.
    for (const body of [
      { enabled: false },
      { enabled: false, url: receiver.url, authorization: 'Bearer x', events: ['call.update'], mediaBase64: true },
    ]) {
      const res = await node.api.post('/api/events/webhook/disable-me', body, { token });
      expect(res.status, JSON.stringify(res.body)).to.equal(200);
      expect(res.body.message).to.equal('Webhook updated');
      expect(res.body.webhook).to.deep.include(cleared);
      expect(res.text).not.to.include('whsec_');
    }
    const list = await node.api.get('/api/events/getWebhook/disable-me', { token });
    expect(list.body.webhooks).to.have.length(1);
    expect(list.body.webhooks[0]).to.deep.include(cleared);
    const stored = (await node.store.webhooks.list(owner!.id)).find((w) => w.label === 'default')!;
    expect(stored).to.deep.include({
      enabled: false,
      url: '',
      events: [],
      base64: false,
      authorizationSealed: undefined,
    });
    expect(stored.secretSealed).to.equal(before.secretSealed);
    expect(stored.createdAt).to.equal(before.createdAt);

    // A disabled webhook receives nothing.
    receiver.received.length = 0;
    await node.api.post('/api/sandbox/inbound/disable-me', { from: '5511933330009', text: 'while off' }, { token });
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).to.deep.equal([]);

    // Enabled again: an update (200, no new secret) that delivers, signed as before.
    const again = await node.api.post('/api/events/webhook/disable-me', { url: receiver.url }, { token });
    expect(again.status).to.equal(200);
    expect(again.body.webhook).to.deep.include({ enabled: true, hasSecret: true });
    expect(again.body.webhook.secret).to.equal(undefined);
    await node.api.post('/api/sandbox/inbound/disable-me', { from: '5511933330009', text: 'back on' }, { token });
    await until(
      () => receiver.events('message.exchange').some((r) => r.body.data.message?.content?.text === 'back on'),
      'the delivery after enabling',
      8000,
    );
    expect(receiver.events('message.exchange').map((r) => r.body.data.message?.content?.text)).to.deep.equal([
      'back on',
    ]);
    const [backOn] = receiver.events('message.exchange');
    expect(backOn!.headers['webhook-signature']).to.be.a('string');
  });

  it('keeps at most 3 enabled webhooks per instance; disabled ones are kept and do not count', async () => {
    const token = await node.createInstance(account, { name: 'config-limit' });
    const post = (label: string, enabled = true) =>
      node.api.post(
        '/api/events/webhook/config-limit',
        enabled ? { label, url: `${receiver.url}/${label}` } : { label, enabled: false },
        { token },
      );
    for (const label of ['a', 'b', 'c']) expect((await post(label)).status, label).to.equal(201);
    expect((await post('off', false)).status).to.equal(201);
    const refused = await post('d');
    expect(refused.status).to.equal(400);
    expect(refused.body.error.message).to.equal(
      'An instance has at most 3 enabled webhooks; disable or delete one first',
    );
    // Updating one of the three is no fourth.
    expect((await post('c')).status).to.equal(200);
    expect((await post('off')).status).to.equal(400);
    expect((await post('b', false)).status).to.equal(200);
    expect((await post('d')).status).to.equal(201);
    const listed = (await node.api.get('/api/events/getWebhook/config-limit', { token })).body.webhooks;
    expect(listed.map((w: { label: string; enabled: boolean }) => [w.label, w.enabled])).to.deep.equal([
      ['a', true],
      ['b', false],
      ['c', true],
      ['d', true],
      ['off', false],
    ]);
  });

  it('refuses bad webhook bodies and changes nothing', async () => {
    const token = await node.createInstance(account, { name: 'config-b' });
    const bad = [
      { url: 'ftp://x.example/' },
      { url: receiver.url, events: ['no.such.event'] },
      { url: receiver.url, base64: true, mediaBase64: false },
      { url: receiver.url, label: 'has space' },
      { enabled: true },
    ];
    for (const body of bad) {
      expect(
        (await node.api.post('/api/events/webhook/config-b', body, { token })).status,
        JSON.stringify(body),
      ).to.equal(400);
    }
    expect((await node.api.get('/api/events/getWebhook/config-b', { token })).body.webhooks).to.deep.equal([]);
  });

  it('delivers every event type with the envelope, the Authorization header and byEvents paths', async () => {
    const { token } = await instance('all-events', {
      webhookAuthorization: 'Bearer hook-secret',
      webhookByEvents: true,
    });
    await node.api.post('/api/sandbox/inbound/all-events', { from: '5511933330000', text: 'hi' }, { token });
    await node.api.post('/api/sandbox/call/all-events', { from: '5511933330000' }, { token });
    await node.api.post(
      '/api/sandbox/group/all-events',
      { subject: 'G', participants: [{ number: '5511933330000' }] },
      { token },
    );
    await node.api.post(
      '/api/sandbox/labels/all-events',
      { chat: '5511933330000', labels: [{ id: '2', name: 'Lead' }] },
      { token },
    );
    await node.api.post('/api/message/text/all-events', { number: '5511933330000', text: 'out' }, { token });
    const types = ['instance.state', 'message.exchange', 'message.status', 'call.update', 'group.flow', 'label.update'];
    await until(() => types.every((t) => receiver.events(t).length > 0), 'one delivery of each event type', 8000);
    for (const r of receiver.received) {
      expect(r.headers.authorization).to.equal('Bearer hook-secret');
      expect(r.headers['content-type']).to.equal('application/json');
      expect(r.path).to.equal(`/${r.body.event}`);
      expect(r.body.instanceData).to.deep.equal({ instance: 'all-events', token, baseUrl: node.url });
      expect(r.headers['x-switchboard-event']).to.equal(r.body.event);
    }
    expect(receiver.events('call.update')[0]!.body.data).to.include({
      from: '5511933330000@s.whatsapp.net',
      status: 'offer',
      reason: null,
      isVideo: false,
    });
    // The hosted product's state names, ours beside them.
    expect(
      receiver.events('instance.state').map((r) => [r.body.data.state, r.body.data.connectionState]),
    ).to.deep.include(['qr_ready', 'qr']);
    expect(receiver.events('label.update')[0]!.body.data).to.deep.include({
      labels: [{ id: '2', name: 'Lead' }],
      action: 'add',
    });
  });

  it('filters by the webhook events list', async () => {
    const { token } = await instance('filtered', { webhookEvents: ['call.update'] });
    await node.api.post(
      '/api/sandbox/inbound/filtered',
      { from: '5511933330001', text: 'ignored by the hook' },
      { token },
    );
    await node.api.post('/api/sandbox/call/filtered', { from: '5511933330001' }, { token });
    await until(() => receiver.events('call.update').length === 1, 'the call', 8000);
    await new Promise((r) => setTimeout(r, 200));
    expect(receiver.received.map((r) => r.body.event)).to.deep.equal(['call.update']);
  });

  it('retries a 500 and delivers once more when the receiver recovers; honours 429 too', async () => {
    const { token } = await instance('flaky', { webhookEvents: ['message.exchange'] });
    receiver.respond = (_r, i) =>
      i === 0 ? { status: 500 } : i === 1 ? { status: 429, headers: { 'retry-after': '0' } } : { status: 200 };
    const sent = await node.api.post(
      '/api/sandbox/inbound/flaky',
      { from: '5511933330002', text: 'retry me' },
      { token },
    );
    await until(() => receiver.received.length === 3, 'three attempts', 8000);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).to.have.length(3);
    expect(new Set(receiver.received.map((r) => r.body.data.id))).to.deep.equal(new Set([sent.body.messageId]));
    expect(new Set(receiver.received.map((r) => r.headers['x-switchboard-delivery'])).size).to.equal(1);
    expect((await node.api.get('/api/events/deadLetters/flaky', { token })).body.deadLetters).to.deep.equal([]);
  });

  it('does not retry a 400: the delivery goes to the dead letters once, and redeliver replays it', async () => {
    const { token } = await instance('rejecting', { webhookEvents: ['message.exchange'] });
    receiver.respond = () => ({ status: 400 });
    const sent = await node.api.post(
      '/api/sandbox/inbound/rejecting',
      { from: '5511933330003', text: 'bad' },
      { token },
    );
    await until(() => receiver.received.length === 1, 'one attempt', 8000);
    let dead: any[] = [];
    for (let i = 0; i < 50 && dead.length === 0; i++) {
      dead = (await node.api.get('/api/events/deadLetters/rejecting', { token })).body.deadLetters;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(dead).to.have.length(1);
    expect(dead[0]).to.deep.include({
      label: 'default',
      event: 'message.exchange',
      attempts: 1,
      lastError: 'HTTP 400',
    });
    expect(dead[0].envelope.data.id).to.equal(sent.body.messageId);
    await new Promise((r) => setTimeout(r, 300));
    expect(receiver.received).to.have.length(1);

    receiver.respond = () => ({ status: 200 });
    const replay = await node.api.post('/api/events/redeliver/rejecting', {}, { token });
    expect(replay.body).to.deep.include({ success: true, redelivered: 1 });
    await until(() => receiver.received.length === 2, 'the replay', 8000);
    expect(receiver.received[1]!.body.data.id).to.equal(sent.body.messageId);
    expect((await node.api.get('/api/events/deadLetters/rejecting', { token })).body.deadLetters).to.deep.equal([]);
  });

  it('gives up after the configured attempts on a receiver that keeps failing', async () => {
    const { token } = await instance('down', { webhookEvents: ['message.exchange'] });
    receiver.respond = () => ({ status: 503 });
    await node.api.post('/api/sandbox/inbound/down', { from: '5511933330004', text: 'x' }, { token });
    await until(() => receiver.received.length === 4, 'four attempts (WEBHOOK_MAX_ATTEMPTS)', 8000);
    let dead: any[] = [];
    for (let i = 0; i < 100 && dead.length === 0; i++) {
      dead = (await node.api.get('/api/events/deadLetters/down', { token })).body.deadLetters;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(dead[0]).to.deep.include({ attempts: 4, lastError: 'HTTP 503' });
  });

  it('a receiver that is down for a while gets everything afterwards', async () => {
    const { token } = await instance('catch-up', { webhookEvents: ['message.exchange'] });
    const downUntil = Date.now() + 600;
    receiver.respond = () => (Date.now() < downUntil ? 'hang' : { status: 200 });
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      ids.push(
        (await node.api.post('/api/sandbox/inbound/catch-up', { from: '5511933330005', text: `m${i}` }, { token })).body
          .messageId as string,
      );
    }
    await until(
      () => ids.every((id) => receiver.received.some((r) => r.body.data.id === id && r.at >= downUntil)),
      'every message after the outage',
      15_000,
    );
  });

  it('refuses webhook URLs on private networks unless ALLOW_PRIVATE_URLS', async () => {
    const strict = await startTestNode({});
    try {
      const acct = await strict.createAccount('strict');
      const token = await strict.createInstance(acct, { name: 'strict' });
      for (const url of [
        'http://127.0.0.1:9/x',
        'http://10.1.2.3/',
        'http://169.254.169.254/latest',
        'http://[::1]/',
      ]) {
        const res = await strict.api.post('/api/events/webhook/strict', { url }, { token });
        expect(res.status, url).to.equal(400);
        expect(res.body.error.message).to.match(/^Invalid webhook url: /);
      }
    } finally {
      await strict.stop();
    }
  });
});
