import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { verifySignature } from '../helpers/signature.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

const DEFAULTS = [
  'enterprise.trial.started',
  'enterprise.trial.ending',
  'enterprise.instance.billable',
  'enterprise.cycle.renewed',
];
const MASK = /^whsec_•+.{4}$/;

describe('account webhook (spec 4.9)', () => {
  let node: TestNode;
  let receiver: WebhookReceiver;
  const patch = (body: unknown, token: string, query = '') =>
    node.api.request('PATCH', `/api/account/webhook${query}`, body, { token });

  before(async () => {
    // Private URLs allowed so the local receiver is reachable; the cron ticks fast, with a long trial.
    node = await startTestNode({
      ALLOW_PRIVATE_URLS: 'true',
      BILLING_TICK: '200ms',
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_RETRY_MAX_MS: '50',
    });
    receiver = await WebhookReceiver.start();
  });

  after(async () => {
    await receiver.stop();
    await node.stop();
  });

  beforeEach(() => {
    receiver.received.length = 0;
    receiver.respond = () => ({ status: 200 });
  });

  it('reads an unconfigured webhook as disabled with the default events and no secret', async () => {
    const token = await node.createAccount('aw-empty');
    const res = await node.api.get('/api/account/webhook', { token });
    expect(res.status).to.equal(200);
    expect(res.body).to.deep.equal({ success: true, url: '', events: DEFAULTS, enabled: false, secretMasked: '' });
  });

  it('shows the secret once on first configuration, masked afterwards, and never on reads', async () => {
    const token = await node.createAccount('aw-first');
    const first = await patch({ url: receiver.url }, token);
    expect(first.status).to.equal(200);
    expect(first.body.secret).to.match(/^whsec_/);
    expect(first.body).to.include({ url: `${receiver.url}/`, enabled: true });
    expect(first.body.events).to.deep.equal(DEFAULTS);
    expect(first.body.secretMasked)
      .to.match(MASK)
      .and.to.satisfy((m: string) => m.endsWith(first.body.secret.slice(-4)));
    const second = await patch({ enabled: false }, token);
    expect(second.body).to.not.have.property('secret');
    expect(second.body.secretMasked).to.equal(first.body.secretMasked);
    const read = await node.api.get('/api/account/webhook', { token });
    expect(read.body).to.deep.equal({
      success: true,
      url: `${receiver.url}/`,
      events: DEFAULTS,
      enabled: false,
      secretMasked: first.body.secretMasked,
    });
    expect(read.text).to.not.include(first.body.secret);
  });

  it('keeps the events when omitted, accepts [] as none, and refuses unknown events', async () => {
    const token = await node.createAccount('aw-events');
    await patch({ url: receiver.url, events: ['enterprise.cycle.renewed'] }, token);
    expect((await patch({ enabled: true }, token)).body.events).to.deep.equal(['enterprise.cycle.renewed']);
    expect((await patch({ events: [] }, token)).body.events).to.deep.equal([]);
    const bad = await patch({ events: ['message.exchange'] }, token);
    expect(bad.status).to.equal(400);
    expect(bad.body.success).to.equal(false);
  });

  it('refuses a malformed URL, a missing URL on first configuration, and a body that is not an object', async () => {
    const token = await node.createAccount('aw-bad');
    for (const body of [
      { url: 'not a url' },
      { url: 'ftp://h.example/x' },
      { url: 'https://u:p@h.example/' },
      { enabled: true },
    ]) {
      const res = await patch(body, token);
      expect(res.status, JSON.stringify(body)).to.equal(400);
    }
    expect((await node.api.request('PATCH', '/api/account/webhook', undefined, { token, raw: '[1]' })).status).to.equal(
      400,
    );
  });

  it('refuses plain HTTP and private addresses unless ALLOW_PRIVATE_URLS', async () => {
    const strict = await startTestNode();
    try {
      const token = await strict.createAccount('aw-strict');
      for (const url of ['http://hooks.example/x', 'https://10.0.0.5/x', 'https://localhost/x', 'https://[::1]/x']) {
        const res = await strict.api.request('PATCH', '/api/account/webhook', { url }, { token });
        expect(res.status, url).to.equal(400);
        expect(res.body.error.message).to.match(/^Invalid webhook url/);
      }
      expect(
        (await strict.api.request('PATCH', '/api/account/webhook', { url: 'https://hooks.example/x' }, { token }))
          .status,
      ).to.equal(200);
    } finally {
      await strict.stop();
    }
  });

  it('accepts the global token with ?account=, and denies other tokens and other accounts', async () => {
    const a = await node.createAccount('aw-a');
    await node.createAccount('aw-b');
    const instanceToken = await node.createInstance(a, { name: 'aw-a-inst' });
    const viaGlobal = await node.api.get('/api/account/webhook?account=aw-b', { token: ADMIN_TOKEN });
    expect(viaGlobal.status).to.equal(200);
    expect((await node.api.get('/api/account/webhook', { token: ADMIN_TOKEN })).status).to.equal(400);
    expect((await node.api.get('/api/account/webhook?account=nobody', { token: ADMIN_TOKEN })).status).to.equal(404);
    expect((await node.api.get('/api/account/webhook?account=aw-b', { token: a })).status).to.equal(403);
    expect((await node.api.get('/api/account/webhook?account=aw-a', { token: a })).status).to.equal(200);
    expect((await node.api.get('/api/account/webhook', { token: instanceToken })).status).to.equal(403);
    expect((await node.api.get('/api/account/webhook', { token: 'nope' })).status).to.equal(401);
    expect((await node.api.get('/api/account/webhook')).status).to.equal(401);
    // The global token configures another account's webhook; the account's own read sees it.
    await node.api.request(
      'PATCH',
      '/api/account/webhook?account=aw-a',
      { url: receiver.url, enabled: false },
      { token: ADMIN_TOKEN },
    );
    expect((await node.api.get('/api/account/webhook', { token: a })).body.url).to.equal(`${receiver.url}/`);
  });

  it('sends a signed test event even when disabled; 400 without a URL', async () => {
    const token = await node.createAccount('aw-test');
    expect((await node.api.post('/api/account/webhook/test', undefined, { token })).status).to.equal(400);
    const { secret } = (await patch({ url: receiver.url, enabled: false }, token)).body;
    expect((await node.api.post('/api/account/webhook/test', undefined, { token })).status).to.equal(200);
    const got = await until(() => receiver.events('enterprise.webhook.test')[0], 'the account webhook');
    expect(Object.keys(got.body)).to.deep.equal(['event', 'account', 'description', 'data', 'timestamp']);
    expect(got.body).to.include({ event: 'enterprise.webhook.test', account: 'aw-test' });
    expect(got.body.data).to.deep.equal({});
    expect(got.body.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    expect(verifySignature(got, secret)).to.equal(true);
    expect(verifySignature(got, `${secret}x`)).to.equal(false);
  });

  it('rotates the secret: later deliveries, retries included, are signed with the new one only', async () => {
    const token = await node.createAccount('aw-rotate');
    expect((await node.api.post('/api/account/webhook/rotate-secret', undefined, { token })).status).to.equal(400);
    const old = (await patch({ url: receiver.url }, token)).body.secret as string;
    // Every attempt fails until the secret is rotated; the retry after it must carry the new signature.
    const state: { rotated?: string } = {};
    receiver.respond = (r) =>
      state.rotated !== undefined && verifySignature(r, state.rotated) ? { status: 200 } : { status: 503 };
    await node.api.post('/api/account/webhook/test', undefined, { token });
    await until(() => receiver.received[0], 'the account webhook');
    const rotation = await node.api.post('/api/account/webhook/rotate-secret', undefined, { token });
    expect(rotation.status).to.equal(200);
    const rotated = rotation.body.secret as string;
    state.rotated = rotated;
    expect(rotated).to.not.equal(old);
    expect(rotation.body.secretMasked)
      .to.match(MASK)
      .and.to.satisfy((m: string) => m.endsWith(rotated.slice(-4)));
    expect((await node.api.get('/api/account/webhook', { token })).body.secretMasked).to.equal(
      rotation.body.secretMasked,
    );
    const retry = await until(() => receiver.accepted()[0], 'the account webhook');
    expect(retry.body).to.deep.equal(receiver.received[0]!.body);
    expect(verifySignature(retry, rotated)).to.equal(true);
    expect(verifySignature(retry, old)).to.equal(false);
    expect(verifySignature(receiver.received[0]!, old)).to.equal(true);
  });

  it('delivers billing events only when enabled and listed', async () => {
    const quiet = await node.createAccount('aw-quiet');
    const none = await node.createAccount('aw-none');
    const live = await node.createAccount('aw-live');
    await patch({ url: `${receiver.url}/quiet`, enabled: false }, quiet);
    await patch({ url: `${receiver.url}/none`, events: [] }, none);
    await patch({ url: `${receiver.url}/live` }, live);
    for (const [t, name] of [
      [quiet, 'q-1'],
      [none, 'n-1'],
      [live, 'l-1'],
    ] as const) {
      await node.createInstance(t, { name });
    }
    const got = await until(
      () => receiver.events('enterprise.trial.started').find((r) => r.path === '/live'),
      'the account webhook',
    );
    expect(got.body.data.instance).to.equal('l-1');
    await new Promise((r) => setTimeout(r, 500));
    expect(receiver.received.filter((r) => r.path !== '/live')).to.deep.equal([]);
  });

  it("lists the account's dead letters and redelivers them, to the account only", async () => {
    const token = await node.createAccount('aw-dead');
    const other = await node.createAccount('aw-dead-other');
    const instanceToken = await node.createInstance(token, { name: 'aw-dead-inst' });
    const dead = () => node.api.get('/api/account/webhook/deadLetters', { token });
    expect((await dead()).body).to.deep.equal({
      success: true,
      message: '0 dead letters',
      deadLetters: [],
      meta: { total: 0 },
    });
    const { secret } = (await patch({ url: `${receiver.url}/dead`, events: [] }, token)).body;
    // A 400 is not retried: the test event goes straight to the dead letters.
    receiver.respond = () => ({ status: 400 });
    await node.api.post('/api/account/webhook/test', undefined, { token });
    let listed: any;
    const deadline = Date.now() + 5000;
    do {
      listed = (await dead()).body;
      if (listed.deadLetters.length > 0) break;
      await new Promise((r) => setTimeout(r, 25));
    } while (Date.now() < deadline);
    expect(listed.meta.total).to.equal(1);
    const [letter] = listed.deadLetters;
    expect(letter).to.include({ event: 'enterprise.webhook.test', url: `${receiver.url}/dead`, attempts: 1 });
    expect(letter.envelope).to.include({ event: 'enterprise.webhook.test', account: 'aw-dead' });
    expect(Object.keys(letter)).to.not.include('label');
    // Other accounts and instance tokens see none of it; a bad body is refused.
    expect((await node.api.get('/api/account/webhook/deadLetters', { token: other })).body.deadLetters).to.deep.equal(
      [],
    );
    expect((await node.api.get('/api/account/webhook/deadLetters', { token: instanceToken })).status).to.equal(403);
    expect(
      (await node.api.get('/api/account/webhook/deadLetters?account=aw-dead', { token: ADMIN_TOKEN })).body.meta.total,
    ).to.equal(1);
    expect((await node.api.post('/api/account/webhook/redeliver', { ids: 'all' }, { token })).status).to.equal(400);
    expect(
      (await node.api.post('/api/account/webhook/redeliver', { ids: ['nope'] }, { token })).body.redelivered,
    ).to.equal(0);
    expect((await node.api.post('/api/account/webhook/redeliver', {}, { token: other })).body.redelivered).to.equal(0);
    receiver.respond = () => ({ status: 200 });
    const replay = await node.api.post('/api/account/webhook/redeliver', { ids: [letter.id] }, { token });
    expect(replay.body).to.deep.equal({ success: true, message: '1 delivery queued again', redelivered: 1 });
    const got = await until(() => receiver.accepted().find((r) => r.path === '/dead'), 'the account webhook');
    expect(got.body).to.deep.equal(letter.envelope);
    expect(verifySignature(got, secret)).to.equal(true);
    expect((await dead()).body.deadLetters).to.deep.equal([]);
  });
});
