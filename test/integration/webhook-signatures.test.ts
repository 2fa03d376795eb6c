import { expect } from 'chai';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { verifyStandardWebhook } from '../helpers/standard-webhooks.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { until } from '../helpers/until.js';

describe('signed instance webhooks (Standard Webhooks)', function () {
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
      WEBHOOK_RETRY_MAX_MS: '100',
      WEBHOOK_MAX_ATTEMPTS: '50',
      WEBHOOK_TIMEOUT_MS: '1000',
    });
    account = await node.createAccount('signed');
    receiver = await WebhookReceiver.start();
  });

  after(async () => {
    await receiver.stop();
    await node.stop();
  });

  async function linked(name: string) {
    const token = await node.createInstance(account, { name });
    await node.api.get(`/api/instance/connect/${name}`, { token });
    expect((await node.api.post(`/api/sandbox/link/${name}`, {}, { token })).status).to.equal(200);
    return token;
  }

  async function inbound(name: string, token: string, text: string): Promise<string> {
    const sent = await node.api.post(`/api/sandbox/inbound/${name}`, { from: '5511944440000', text }, { token });
    expect(sent.status).to.equal(200);
    return sent.body.messageId as string;
  }

  const ofMessage = (id: string) => receiver.received.filter((r) => r.body?.data?.id === id);

  it('signs every delivery; a rotation signs with both secrets, retries keep their webhook-id', async () => {
    const token = await linked('signer');
    const created = await node.api.post(
      '/api/events/webhook/signer',
      { label: 'crm', url: `${receiver.url}/crm`, events: ['message.exchange'] },
      { token },
    );
    expect(created.status).to.equal(201);
    const first = created.body.webhook.secret as string;
    expect(first).to.match(/^whsec_/);
    expect(created.body.webhook).to.include({ hasSecret: true, previousSecretValidUntil: null });

    // The secret is shown once: never by a read or an update, and kept sealed in the store.
    const read = await node.api.get('/api/events/getWebhook/signer?label=crm', { token });
    // A same-label POST overwrites every field, so the update names them all again.
    const updated = await node.api.post(
      '/api/events/webhook/signer',
      { label: 'crm', url: `${receiver.url}/crm`, events: ['message.exchange'], byEvents: false },
      { token },
    );
    expect(updated.status).to.equal(200);
    for (const res of [read, updated]) {
      expect(res.text).not.to.include('whsec_');
      expect(res.body.webhook.hasSecret).to.equal(true);
    }

    const before = [await inbound('signer', token, 'one'), await inbound('signer', token, 'two')];
    await until(() => before.every((id) => ofMessage(id).some((r) => r.status === 200)), 'two deliveries', 8000);
    for (const id of before) {
      const [r] = ofMessage(id);
      expect(verifyStandardWebhook(r!, first), 'signed with the first secret').to.equal(true);
      expect(String(r!.headers['webhook-signature']).split(' ')).to.have.length(1);
    }
    expect(new Set(before.map((id) => ofMessage(id)[0]!.headers['webhook-id'])).size).to.equal(2);

    // A delivery refused until the rotation: its retries go out before and after it, under one webhook-id.
    let rotated = false;
    receiver.respond = (r) =>
      rotated || r.body?.data?.message?.content?.text !== 'held' ? { status: 200 } : { status: 503 };
    const held = await inbound('signer', token, 'held');
    await until(() => ofMessage(held).length >= 2, 'two refused attempts', 8000);

    const rotation = await node.api.post('/api/events/webhook/signer/rotate-secret', { label: 'crm' }, { token });
    expect(rotation.status, JSON.stringify(rotation.body)).to.equal(200);
    const second = rotation.body.webhook.secret as string;
    expect(second)
      .to.match(/^whsec_/)
      .and.not.equal(first);
    const until24h = Date.parse(rotation.body.webhook.previousSecretValidUntil as string) - Date.now();
    expect(until24h).to.be.within(24 * 3600_000 - 60_000, 24 * 3600_000);
    rotated = true;

    await until(() => ofMessage(held).some((r) => r.status === 200), 'the held delivery, after the rotation', 8000);
    const attempts = ofMessage(held);
    expect(new Set(attempts.map((r) => r.headers['webhook-id'])).size).to.equal(1);
    const accepted = attempts.find((r) => r.status === 200)!;
    expect(verifyStandardWebhook(accepted, first), 'the old secret still verifies').to.equal(true);
    expect(verifyStandardWebhook(accepted, second), 'the new secret verifies').to.equal(true);
    expect(String(accepted.headers['webhook-signature']).split(' ')).to.have.length(2);

    const after = await inbound('signer', token, 'three');
    await until(() => ofMessage(after).some((r) => r.status === 200), 'a delivery after the rotation', 8000);
    const [r] = ofMessage(after);
    expect(verifyStandardWebhook(r!, second)).to.equal(true);
    expect(verifyStandardWebhook(r!, first)).to.equal(true);

    // Every delivery verifies with one of the secrets the receiver was given, and with nothing else.
    for (const d of receiver.received) {
      expect(verifyStandardWebhook(d, first) || verifyStandardWebhook(d, second)).to.equal(true);
      expect(verifyStandardWebhook(d, 'whsec_' + Buffer.alloc(32).toString('base64'))).to.equal(false);
      expect(d.headers['x-service-signature']).to.equal(undefined);
    }
  });

  it('the creation block gives the default webhook its secret once', async () => {
    const res = await node.api.post(
      '/api/instance/new',
      { name: 'with-hook', webhookEnabled: true, webhookURL: receiver.url, webhookEvents: ['message.exchange'] },
      { token: account },
    );
    expect(res.status).to.equal(201);
    const secret = res.body.webhook.secret as string;
    expect(secret).to.match(/^whsec_/);
    const token = res.body.instance.token as string;
    await node.api.get('/api/instance/connect/with-hook', { token });
    await node.api.post('/api/sandbox/link/with-hook', {}, { token });
    const id = await inbound('with-hook', token, 'from the block');
    await until(() => ofMessage(id).some((r) => r.status === 200), 'the delivery', 8000);
    expect(verifyStandardWebhook(ofMessage(id)[0]!, secret)).to.equal(true);
    expect((await node.api.get('/api/instance/fetchInstances', { token })).text).not.to.include('whsec_');
  });

  it('keeps the secret sealed at rest; rotating an unknown webhook is a 404', async () => {
    const token = await node.createInstance(account, { name: 'sealed' });
    const created = await node.api.post('/api/events/webhook/sealed', { url: receiver.url }, { token });
    const secret = created.body.webhook.secret as string;
    const instance = await node.store.instances.findByName(
      (await node.store.accounts.findByName('signed'))!.id,
      'sealed',
    );
    const [stored] = await node.store.webhooks.list(instance!.id);
    expect(stored!.secretSealed).to.be.a('string').and.not.include(secret.slice('whsec_'.length));
    const missing = await node.api.post('/api/events/webhook/sealed/rotate-secret', { label: 'nope' }, { token });
    expect(missing.status).to.equal(404);
    expect(missing.body.error.message).to.equal('Webhook not found');
  });
});
