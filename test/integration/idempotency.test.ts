import { expect } from 'chai';
import { IDEMPOTENCY_NAMESPACE } from '../../src/actors/idempotency-records.js';
import { hashToken } from '../../src/security/tokens.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

describe('Idempotency-Key on sends (the same request twice acts once)', () => {
  let n: NetworkNode;
  let token: string;
  const PEER = '5511900000099';

  before(async () => {
    n = await startNetworkNode();
    token = await n.linked('idem', '5511900000098');
  });
  after(async () => {
    await n?.stop();
  });

  const sendText = (text: string, key?: string) =>
    n.node.api.post(
      '/api/message/text/idem',
      { number: PEER, text },
      { token, ...(key !== undefined ? { headers: { 'idempotency-key': key } } : {}) },
    );
  /** Messages (not presence updates) that reached the network for the peer. */
  const sentTo = async () =>
    (await n.outbox('idem', token, `${PEER}@s.whatsapp.net`)).filter((e: { type: string }) => e.type !== 'presence')
      .length;

  it('replays the recorded answer for the same key and body, and sends once', async () => {
    const before = await sentTo();
    const first = await sendText('hello once', 'order-1001');
    expectOk(first);
    expect(first.headers.get('idempotent-replayed')).to.equal(null);
    const again = await sendText('hello once', 'order-1001');
    expectOk(again);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(again.body).to.deep.equal(first.body);
    expect(await sentTo()).to.equal(before + 1);
  });

  it('refuses the same key with a different body with 422 and sends nothing', async () => {
    expectOk(await sendText('first body', 'order-1002'));
    const before = await sentTo();
    const res = await sendText('another body', 'order-1002');
    expectError(
      res,
      422,
      'This Idempotency-Key was already used with a different request; use a new key for a new request',
    );
    expect(res.body.error.code).to.equal('idempotency_key_reused');
    expect(await sentTo()).to.equal(before);
  });

  it('forgets a key whose request was refused before anything was sent', async () => {
    const refused = await n.node.api.post(
      '/api/message/text/idem',
      { number: PEER },
      { token, headers: { 'idempotency-key': 'order-1003' } },
    );
    expectError(refused, 400, 'Message is required');
    const ok = await sendText('now with a message', 'order-1003');
    expectOk(ok);
    expect(ok.headers.get('idempotent-replayed')).to.equal(null);
  });

  it('sends without a key as before: each request acts', async () => {
    const before = await sentTo();
    expectOk(await sendText('no key'));
    expectOk(await sendText('no key'));
    expect(await sentTo()).to.equal(before + 2);
  });

  it('the same key sent again while the first request runs: one send, both get its answer', async () => {
    const before = await sentTo();
    const slow = n.node.api.post(
      '/api/message/text/idem',
      { number: PEER, text: 'typing first', delayMs: 400 },
      { token, headers: { 'idempotency-key': 'order-1005' } },
    );
    await new Promise((r) => setTimeout(r, 100));
    const concurrent = await n.node.api.post(
      '/api/message/text/idem',
      { number: PEER, text: 'typing first', delayMs: 400 },
      { token, headers: { 'idempotency-key': 'order-1005' } },
    );
    const first = await slow;
    expectOk(first);
    expectOk(concurrent);
    // The owner runs keyed calls one turn at a time: the second meets the first's recorded outcome.
    expect(concurrent.headers.get('idempotent-replayed')).to.equal('true');
    expect(concurrent.body.data.messageId).to.equal(first.body.data.messageId);
    expect(await sentTo()).to.equal(before + 1);
  });

  it('answers 409 to a key whose call was cut off with an unknown outcome, and sends nothing', async () => {
    const before = await sentTo();
    // What an owner leaves when it dies between recording the call and recording its outcome.
    const instanceId = (await n.node.store.instances.findByTokenHash(hashToken(token)))!.id;
    const epoch = (await n.node.store.instances.findById(instanceId))!.ownerEpoch;
    const fingerprintOf = async () => {
      const probe = await sendText('cut off', 'order-probe');
      expectOk(probe);
      const raw = await n.node.store.ownedState.get(instanceId, IDEMPOTENCY_NAMESPACE, 'order-probe#0');
      return (JSON.parse(raw!) as { fingerprint: string }).fingerprint;
    };
    const fingerprint = await fingerprintOf();
    await n.node.store.ownedState.write(instanceId, epoch, [
      {
        namespace: IDEMPOTENCY_NAMESPACE,
        key: 'order-cut#0',
        value: JSON.stringify({ fingerprint, state: 'started', at: Date.now() }),
      },
    ]);
    const res = await sendText('cut off', 'order-cut');
    expectError(
      res,
      409,
      'A request with this Idempotency-Key is still running, or was cut off with an unknown outcome',
    );
    expect(await sentTo()).to.equal(before + 1);
  });

  it('refuses a malformed key with 400 naming the header', async () => {
    const res = await sendText('x', 'has space');
    expectError(res, 400, 'Invalid Idempotency-Key header: 1 to 255 visible ASCII characters');
    expectError(
      await sendText('x', 'k'.repeat(256)),
      400,
      'Invalid Idempotency-Key header: 1 to 255 visible ASCII characters',
    );
  });

  it('remembers the key across an owner change: the record lives in the fenced owned state', async () => {
    expectOk(await sendText('before the handoff', 'order-1004'));
    const before = await sentTo();
    const instance = (await n.node.store.instances.findByTokenHash(hashToken(token)))!;
    await n.node.runtime.host.deactivate(instance.id, 'handoff');
    const again = await sendText('before the handoff', 'order-1004');
    expectOk(again);
    expect(again.headers.get('idempotent-replayed')).to.equal('true');
    expect(await sentTo()).to.equal(before);
  });

  it('documents the header on the send routes', async () => {
    const doc = (await (await fetch(`${n.node.url}/openapi.json`)).json()) as any;
    const params = doc.paths['/api/message/text/{instance}'].post.parameters as { name: string; in: string }[];
    expect(params.some((p) => p.name === 'Idempotency-Key' && p.in === 'header')).to.equal(true);
  });
});
