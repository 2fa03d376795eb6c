import { expect } from 'chai';
import { WebSocket } from 'ws';
import { parseSamples, sampleSum } from '../helpers/prometheus-text.js';
import type { Sample } from '../helpers/prometheus-text.js';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { expectError, expectOk } from './support.js';
import { until } from '../helpers/until.js';

const METRICS_TOKEN = 'metrics-token-0123456789abcdef';

async function scrape(node: TestNode): Promise<Sample[]> {
  const res = await node.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
  expect(res.status, res.text).to.equal(200);
  return parseSamples(res.text);
}

describe('GET /metrics (Prometheus)', function () {
  this.timeout(30_000);
  let node: TestNode;
  let other: TestNode;
  let receiver: WebhookReceiver;

  before(async () => {
    receiver = await WebhookReceiver.start();
    const env = {
      METRICS_TOKEN,
      ALLOW_PRIVATE_URLS: 'true',
      LEASE_TTL_MS: '600',
      RATE_LIMIT_CREATE_PER_MINUTE: '2',
      WEBHOOK_RETRY_BASE_MS: '20',
      WEBHOOK_RETRY_MAX_MS: '50',
    };
    node = await startTestNode(env);
    other = await startTestNode(env);
  });

  after(async () => {
    await node?.stop();
    await other?.stop();
    await receiver?.stop();
  });

  it('takes METRICS_TOKEN or the global token, from a header only', async () => {
    expectError(await node.api.get('/metrics'), 401, 'Missing token in header');
    expectError(await node.api.get(`/metrics?token=${METRICS_TOKEN}`), 401, 'Missing token in header');
    expectError(await node.api.get('/metrics', { token: 'not-the-metrics-token-at-all' }), 401, 'Invalid token');
    const account = await node.createAccount('metrics-reader');
    expectError(await node.api.get('/metrics', { token: account }), 403, 'This operation requires the global token');

    const viaBearer = await node.api.get('/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(viaBearer.status).to.equal(200);
    expect(viaBearer.headers.get('content-type')).to.match(/^text\/plain/);
    const viaAdmin = await node.api.get('/metrics', { token: ADMIN_TOKEN });
    expect(viaAdmin.status).to.equal(200);
    const samples = parseSamples(viaAdmin.text);
    for (const name of [
      'switchboard_actors_owned',
      'switchboard_mailbox_depth',
      'switchboard_webhook_queue_depth',
      'switchboard_websocket_clients',
      'switchboard_whatsapp_connected',
      'switchboard_whatsapp_logins_waiting',
      'switchboard_whatsapp_logins_refused_total',
    ]) {
      expect(
        samples.some((s) => s.name === name && s.labels.node === node.nodeId),
        name,
      ).to.equal(true);
    }
    expect(sampleSum(samples, 'switchboard_store_operations_total', { repository: 'accounts' })).to.be.above(0);
    // The process-wide metrics follow the node's own.
    expect(samples.some((s) => s.name === 'process_resident_memory_bytes')).to.equal(true);
  });

  it('moves with real activity: activations, calls by outcome, renewals, deliveries, WebSockets, rate limits', async () => {
    const before = await scrape(node);
    const account = await node.createAccount('metrics-acct');
    // The first attempt of the first delivery fails (retried), every message.exchange is refused (buried).
    receiver.respond = (r, i) => ({ status: i === 0 ? 500 : r.body?.event === 'message.exchange' ? 400 : 200 });
    const token = await node.createInstance(account, {
      name: 'm1',
      webhookEnabled: true,
      webhookURL: `${receiver.url}/hook`,
      websocketEnabled: true,
    });
    const idle = await node.createInstance(account, { name: 'm2' });
    expectError(
      await node.api.post('/api/instance/new', { name: 'm3' }, { token: account }),
      429,
      'Rate limit exceeded. Try again later.',
    );

    expectOk(await node.api.get('/api/instance/connect/m1', { token }));
    expectOk(await node.api.post('/api/sandbox/link/m1', { number: '5511900000001' }, { token }));
    expectOk(await node.api.post('/api/sandbox/inbound/m1', { from: '5511900000002', text: 'hi' }, { token }));
    expectOk(await node.api.post('/api/message/text/m1', { number: '5511900000002', text: 'hello' }, { token }));
    // Never connected: the owner refuses the send.
    const refused = await node.api.post(
      '/api/message/text/m2',
      { number: '5511900000002', text: 'hello' },
      { token: idle },
    );
    expect(refused.status).to.equal(400);

    const socket = new WebSocket(`${node.url.replace('http', 'ws')}/ws/m1`, { headers: { token } });
    await new Promise((resolve, reject) => socket.once('open', resolve).once('error', reject));
    try {
      await until(
        async () => (receiver.received.some((r) => r.body?.event === 'message.exchange') ? true : undefined),
        'the refused message.exchange delivery',
        10000,
      );
      const answered = (status: number) => receiver.received.filter((r) => r.status === status).length;
      const after = await until(
        async () => {
          const s = await scrape(node);
          const renewals = sampleSum(s, 'switchboard_lease_renew_duration_seconds_count');
          const attempts = sampleSum(s, 'switchboard_webhook_delivery_duration_seconds_count');
          return renewals > 0 && attempts === receiver.received.filter((r) => r.status !== undefined).length
            ? s
            : undefined;
        },
        'a lease renewal, and every answered delivery attempt counted',
        10000,
      );
      const moved = (name: string, labels: Record<string, string> = {}) =>
        sampleSum(after, name, labels) - sampleSum(before, name, labels);

      expect(moved('switchboard_actor_activations_total')).to.equal(2);
      expect(sampleSum(after, 'switchboard_actors_owned')).to.equal(node.runtime.host.size);
      expect(sampleSum(after, 'switchboard_actors_owned')).to.equal(2);
      expect(
        moved('switchboard_routed_call_duration_seconds_count', { target: 'local', outcome: 'ok' }),
      ).to.be.at.least(4);
      expect(
        moved('switchboard_routed_call_duration_seconds_count', { target: 'local', outcome: 'not_connected' }),
      ).to.equal(1);
      expect(
        moved('switchboard_routed_call_duration_seconds_sum', { target: 'local', outcome: 'ok' }),
      ).to.be.greaterThan(0);
      expect(moved('switchboard_webhook_delivery_duration_seconds_count', { outcome: 'retried' }))
        .to.equal(1)
        .and.equal(answered(500));
      expect(moved('switchboard_webhook_delivery_duration_seconds_count', { outcome: 'buried' }))
        .to.equal(answered(400))
        .and.be.at.least(1);
      expect(moved('switchboard_webhook_delivery_duration_seconds_count', { outcome: 'delivered' }))
        .to.equal(answered(200))
        .and.be.at.least(3);
      expect(sampleSum(after, 'switchboard_webhook_queue_depth')).to.equal(0);
      expect(moved('switchboard_rate_limit_rejections_total', { bucket: 'create' })).to.equal(1);
      expect(moved('switchboard_rate_limit_rejections_total', { bucket: 'requests' })).to.equal(0);
      expect(sampleSum(after, 'switchboard_websocket_clients', { kind: 'instance' })).to.equal(1);
      expect(sampleSum(after, 'switchboard_websocket_clients', { kind: 'console' })).to.equal(0);
      expect(sampleSum(after, 'switchboard_mailbox_depth')).to.equal(0);
      expect(sampleSum(after, 'switchboard_lease_renew_failures_total')).to.equal(0);
    } finally {
      socket.close();
    }
    await until(
      async () => (sampleSum(await scrape(node), 'switchboard_websocket_clients') === 0 ? true : undefined),
      'the WebSocket client to be gone',
      10000,
    );
  });

  it('counts received media: the download for a base64 WebSocket and the one kept copy', async () => {
    const before = await scrape(node);
    const account = await node.createAccount('metrics-media');
    const token = await node.createInstance(account, { name: 'media1', websocketEnabled: true, websocketBase64: true });
    expectOk(await node.api.get('/api/instance/connect/media1', { token }));
    expectOk(await node.api.post('/api/sandbox/link/media1', { number: '5511900000011' }, { token }));
    const file = Buffer.from('a received file').toString('base64');
    const media = { kind: 'document', mimetype: 'text/plain', fileName: 'note.txt', base64: file };
    expectOk(await node.api.post('/api/sandbox/inbound/media1', { from: '5511900000012', media }, { token }));
    const after = await scrape(node);
    const moved = (event: string) =>
      sampleSum(after, 'switchboard_received_media_total', { event }) -
      sampleSum(before, 'switchboard_received_media_total', { event });
    expect(moved('downloaded')).to.equal(1);
    expect(moved('downloadedBytes')).to.equal(Buffer.byteLength('a received file'));
    expect(moved('blobKept')).to.equal(1);
    expect(moved('downloadFailed')).to.equal(0);
  });

  it('keeps one registry per node: another node in the same process counts only its own activity', async () => {
    const mine = await scrape(node);
    const theirs = await scrape(other);
    expect(mine.every((s) => (s.name.startsWith('switchboard_') ? s.labels.node === node.nodeId : true))).to.equal(
      true,
    );
    expect(theirs.every((s) => (s.name.startsWith('switchboard_') ? s.labels.node === other.nodeId : true))).to.equal(
      true,
    );
    expect(sampleSum(mine, 'switchboard_actor_activations_total')).to.be.greaterThan(0);
    expect(sampleSum(theirs, 'switchboard_actor_activations_total')).to.equal(0);
    expect(sampleSum(theirs, 'switchboard_routed_call_duration_seconds_count')).to.equal(0);
  });
});
