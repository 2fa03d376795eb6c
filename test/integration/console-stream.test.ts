import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { TestClient, rawUpgrade } from '../helpers/ws-harness.js';
import type { RawUpgradeResponse } from '../helpers/ws-harness.js';
import { NO_RATE_LIMITS } from './support.js';
import { until } from '../helpers/until.js';

/** GET /console/stream: the operator console's account-wide WebSocket (http/ws/console-stream.ts). */

const ALLOWED = 'https://ops.example.com';
const REFRESH_MS = 100;
const ENV = { ...NO_RATE_LIMITS, ALLOWED_WS_ORIGINS: ALLOWED, WS_CONFIG_REFRESH_MS: String(REFRESH_MS) };

interface InstancesFrame {
  console: 'instances';
  account: string;
  instances: string[];
}

function expectRefusal(res: RawUpgradeResponse, status: number, message: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.body?.success, res.text).to.equal(false);
  expect(res.body?.error?.message, res.text).to.equal(message);
}

describe('console stream: every instance of an account on one WebSocket', function () {
  this.timeout(30_000);
  let node: TestNode;
  let account: string;
  let wsUrl: string;
  let seq = 0;
  const clients: TestClient[] = [];

  before(async () => {
    node = await startTestNode(ENV);
    wsUrl = node.url.replace(/^http/, 'ws');
    account = await node.createAccount('ops');
  });

  afterEach(() => {
    for (const c of clients.splice(0)) c.ws.terminate();
  });

  after(async () => {
    await node?.stop();
  });

  async function open(token: string): Promise<TestClient> {
    const client = await TestClient.open(`${wsUrl}/console/stream?token=${encodeURIComponent(token)}`);
    clients.push(client);
    return client;
  }

  const lists = (c: TestClient) =>
    (c.envelopes as unknown as Array<Partial<InstancesFrame>>).filter(
      (f) => f.console === 'instances',
    ) as InstancesFrame[];
  const lastList = (c: TestClient) => lists(c).at(-1)?.instances;

  async function link(name: string, token: string): Promise<void> {
    expect((await node.api.get(`/api/instance/connect/${name}`, { token })).status).to.equal(200);
    const res = await node.api.post(
      `/api/sandbox/link/${name}`,
      { number: `55219${String(++seq).padStart(8, '0')}` },
      { token },
    );
    expect(res.status, res.text).to.equal(200);
  }

  it('is refused before the upgrade like /ws/:instance: token, account token only, origin', async () => {
    const instanceToken = await node.createInstance(account, { name: 'refusals' });
    const upgrade = (path: string, headers: Record<string, string> = {}) => rawUpgrade(node.url, path, headers);
    expectRefusal(
      await upgrade('/console/stream'),
      401,
      'Missing token in header, Authorization header, or query parameter',
    );
    expectRefusal(await upgrade('/console/stream?token=nope'), 401, 'Invalid token');
    expectRefusal(await upgrade(`/console/stream?token=${encodeURIComponent(ADMIN_TOKEN)}`), 401, 'Invalid token');
    expectRefusal(
      await upgrade('/console/stream', { token: instanceToken }),
      403,
      'This operation requires an account token',
    );
    expectRefusal(
      await upgrade('/console/stream', { token: ADMIN_TOKEN }),
      403,
      'This operation requires an account token',
    );
    const foreign = await upgrade('/console/stream', { token: account, origin: 'https://evil.example.net' });
    expect(foreign.status).to.equal(403);
    expect(foreign.text).to.equal('');
    // Same-origin (the console page itself), a listed origin and a client without Origin are accepted.
    expect((await upgrade('/console/stream', { token: account, origin: node.url })).status).to.equal(101);
    expect((await upgrade('/console/stream', { token: account, origin: ALLOWED })).status).to.equal(101);
    const ok = await upgrade(`/console/stream?token=${encodeURIComponent(account)}`);
    expect(ok.status).to.equal(101);
    expect(ok.headers['x-ratelimit-limit']).to.equal(NO_RATE_LIMITS.RATE_LIMIT_PER_MINUTE);
    // The spec's per-instance path is untouched, and an unknown path is still 404.
    expect((await upgrade('/console/other', { token: account })).status).to.equal(404);
    await node.api.delete('/api/instance/delete/refusals', { token: account });
  });

  it('lists the instances first, then forwards the events of each, without the instance token', async () => {
    const alpha = await node.createInstance(account, { name: 'alpha' });
    // No WebSocket configuration at all: the console sees its events anyway.
    const beta = await node.createInstance(account, { name: 'beta', websocketEnabled: false });
    const other = await node.createAccount('elsewhere');
    const foreign = await node.createInstance(other, { name: 'foreign' });
    const client = await open(account);
    await until(() => lists(client).length === 1, 'the first instances frame');
    expect(client.envelopes[0]).to.deep.equal({ console: 'instances', account: 'ops', instances: ['alpha', 'beta'] });

    await link('alpha', alpha);
    await link('beta', beta);
    await link('foreign', foreign);
    await node.api.post(
      '/api/sandbox/inbound/beta',
      { from: '5511912345678', text: 'to beta', pushName: 'Ana' },
      { token: beta },
    );
    await until(() => client.events('message.exchange').length === 1, 'the message of beta');
    const states = client
      .events('instance.state')
      .map((e) => `${e.instanceData.instance}:${(e.data as { state: string }).state}`);
    expect(states).to.include.members(['alpha:qr_ready', 'alpha:connected', 'beta:qr_ready', 'beta:connected']);
    expect(client.envelopes.some((e) => e.instanceData?.instance === 'foreign')).to.equal(false);
    const message = client.events('message.exchange')[0]!;
    expect(message.instanceData).to.deep.equal({ instance: 'beta', baseUrl: node.url });
    expect((message.data as { message: { content: { text: string } } }).message.content.text).to.equal('to beta');
    expect(client.raw.join('\n')).to.not.include(beta).and.not.include(alpha);
  });

  it('subscribes to an instance created after it opened at once on {"console":"refresh"}', async () => {
    // A re-list period far beyond the test: only the client's ask can explain the new subscription.
    const own = await startTestNode({ ...ENV, WS_CONFIG_REFRESH_MS: '600000' });
    try {
      const token = await own.createAccount('asks');
      const client = await TestClient.open(
        `${own.url.replace(/^http/, 'ws')}/console/stream?token=${encodeURIComponent(token)}`,
      );
      clients.push(client);
      await until(() => lists(client).length === 1, 'the first instances frame');
      expect(lastList(client)).to.deep.equal([]);
      const gamma = await own.createInstance(token, { name: 'gamma' });
      // Other client messages are ignored; the stream stays open.
      client.ws.send('not json');
      client.ws.send(JSON.stringify({ console: 'something-else' }));
      client.ws.send(JSON.stringify({ console: 'refresh' }));
      await until(() => lastList(client)?.includes('gamma') === true, 'gamma in the list');
      expect(lists(client)).to.have.length(2);
      expect((await own.api.get('/api/instance/connect/gamma', { token: gamma })).status).to.equal(200);
      expect((await own.api.post('/api/sandbox/link/gamma', {}, { token: gamma })).status).to.equal(200);
      await until(
        () =>
          client
            .events('instance.state')
            .some((e) => e.instanceData.instance === 'gamma' && (e.data as { state: string }).state === 'connected'),
        'gamma connected',
      );
      expect(client.close).to.equal(undefined);
    } finally {
      await own.stop();
    }
  });

  it('notices instances created and deleted through the API by its periodic re-list', async () => {
    const client = await open(account);
    await until(() => lists(client).length === 1, 'the first instances frame');
    expect(lastList(client)).to.not.include('delta');
    await node.createInstance(account, { name: 'delta' });
    await until(() => lastList(client)?.includes('delta') === true, 'delta in the list');
    expect((await node.api.delete('/api/instance/delete/delta', { token: account })).status).to.equal(200);
    await until(() => lastList(client)?.includes('delta') === false, 'delta gone from the list');
  });

  it('closes with 1008 once the TokenAccount is rotated, and with 1009 on a client frame over 4096 bytes', async () => {
    const big = await open(account);
    await until(() => lists(big).length === 1, 'the first instances frame');
    big.ws.send('x'.repeat(4097));
    expect((await big.closedWithin(5000)).code).to.equal(1009);

    const client = await open(account);
    await until(() => lists(client).length === 1, 'the first instances frame');
    const rotated = await node.api.post('/api/admin/accounts/ops/token', undefined, { token: ADMIN_TOKEN });
    expect(rotated.status, rotated.text).to.equal(200);
    expect((await client.closedWithin(5000)).code).to.equal(1008);
    account = rotated.body.account.token as string;
    const again = await open(account);
    await until(() => lists(again).length === 1, 'the first instances frame with the new token');
  });

  it('shares one set of subscriptions per account on a node and drops it with the last stream', async () => {
    const a = await open(account);
    const b = await open(account);
    await until(() => lists(a).length === 1 && lists(b).length === 1, 'both streams listed');
    const instances = lastList(a)!.length;
    expect(instances).to.be.greaterThan(0);
    expect(node.websockets.consoleSize).to.equal(2);
    expect(node.websockets.consoleSubscriptions).to.equal(instances);
    a.ws.close();
    await a.closed;
    await until(() => node.websockets.consoleSize === 1, 'one stream unregistered');
    expect(node.websockets.consoleSubscriptions).to.equal(instances);
    b.ws.close();
    await b.closed;
    await until(
      () => node.websockets.consoleSize === 0 && node.websockets.consoleSubscriptions === 0,
      'the subscriptions dropped',
    );
  });

  it('closes the streams with 1001 when the node shuts down', async () => {
    const own = await startTestNode(ENV);
    try {
      const token = await own.createAccount('closing');
      const client = await TestClient.open(
        `${own.url.replace(/^http/, 'ws')}/console/stream?token=${encodeURIComponent(token)}`,
      );
      await until(() => client.envelopes.length === 1, 'the first instances frame');
      const stopping = own.stop();
      expect((await client.closedWithin(10_000)).code).to.equal(1001);
      await stopping;
    } catch (err) {
      await own.stop().catch(() => undefined);
      throw err;
    }
  });
});
