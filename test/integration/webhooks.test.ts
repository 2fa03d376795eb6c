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
    const updated = await node.api.post('/api/events/webhook/config-a', { label: 'crm', byEvents: true }, { token });
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
