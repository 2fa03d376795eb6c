import { expect } from 'chai';
import { MemoryRateLimiter } from '../../src/cluster/rate-limiter.js';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { TestClient, gatewayFor, rawUpgrade } from '../helpers/ws-harness.js';
import type { GatewayHarness, RawUpgradeResponse } from '../helpers/ws-harness.js';
import { NO_RATE_LIMITS } from './support.js';

/** Pre-upgrade rules of GET /ws/:instance (spec sections 4.10, 5, 7). */

const ALLOWED = 'https://app.example.com';
const ENV = { ...NO_RATE_LIMITS, ALLOWED_WS_ORIGINS: `${ALLOWED}, https://admin.example.com/` };

function expectRefusal(res: RawUpgradeResponse, status: number, message: string): void {
  expect(res.status, res.text).to.equal(status);
  expect(res.headers['content-type']).to.match(/^application\/json/);
  expect(res.body, res.text).to.deep.include({ success: false });
  expect(res.body.error.message, res.text).to.equal(message);
}

describe('WebSocket: validation before the upgrade', function () {
  this.timeout(30_000);
  let node: TestNode;
  let gw: GatewayHarness;
  let account: string;
  let otherAccount: string;
  let liveToken: string;
  let siblingToken: string;

  before(async () => {
    node = await startTestNode(ENV);
    gw = await gatewayFor(node, ENV);
    account = await node.createAccount('acme', { allowedOrigins: ['https://crm.acme.com'] });
    otherAccount = await node.createAccount('globex');
    liveToken = await node.createInstance(account, { name: 'live', websocketEnabled: true });
    siblingToken = await node.createInstance(account, { name: 'quiet' });
    await node.createInstance(account, { name: 'off', websocketEnabled: false });
    await node.createInstance(otherAccount, { name: 'foreign', websocketEnabled: true });
  });

  after(async () => {
    await gw?.close();
    await node?.stop();
  });

  const upgrade = (path: string, headers: Record<string, string> = {}) => rawUpgrade(gw.httpUrl, path, headers);

  it('accepts the token as header, as Authorization: Bearer and as ?token=, and the TokenAccount too', async () => {
    expect((await upgrade('/ws/live', { token: liveToken })).status).to.equal(101);
    expect((await upgrade('/ws/live', { authorization: `Bearer ${liveToken}` })).status).to.equal(101);
    expect((await upgrade(`/ws/live?token=${encodeURIComponent(liveToken)}`)).status).to.equal(101);
    expect((await upgrade('/ws/live', { token: account })).status).to.equal(101);
    const client = await TestClient.open(`${gw.wsUrl}/ws/live?token=${encodeURIComponent(liveToken)}`);
    expect(client.ws.readyState).to.equal(client.ws.OPEN);
    client.ws.close();
    await client.closed;
  });

  it('401 for a missing, unknown or mismatched token, with the HTTP API messages', async () => {
    expectRefusal(await upgrade('/ws/live'), 401, 'Missing token in header, Authorization header, or query parameter');
    expectRefusal(await upgrade('/ws/live', { token: 'not-a-token-at-all' }), 401, 'Invalid token');
    expectRefusal(await upgrade('/ws/live?token=not-a-token-at-all'), 401, 'Invalid token');
    expectRefusal(await upgrade('/ws/foreign', { token: liveToken }), 401, 'Invalid instance token');
  });

  it('never recognises the global token in a URL: 401 Invalid token (in a header it is 403)', async () => {
    expectRefusal(await upgrade(`/ws/live?token=${encodeURIComponent(ADMIN_TOKEN)}`), 401, 'Invalid token');
  });

  it('403 for an instance the token may not open, 404 for a name that exists nowhere', async () => {
    expectRefusal(
      await upgrade('/ws/live', { token: siblingToken }),
      403,
      'Instance token does not match requested instance',
    );
    expectRefusal(await upgrade('/ws/foreign', { token: account }), 403, 'Instance does not belong to your account');
    expectRefusal(await upgrade('/ws/live', { token: ADMIN_TOKEN }), 403, 'An account or instance token is required');
    expectRefusal(await upgrade('/ws/nowhere', { token: account }), 404, 'Instance not found');
  });

  it('400 when the instance has no enabled WebSocket configuration', async () => {
    expectRefusal(
      await upgrade('/ws/quiet', { token: siblingToken }),
      400,
      'WebSocket is not enabled for this instance. Configure it first using POST /api/events/websocket/quiet',
    );
    expectRefusal(
      await upgrade('/ws/off', { token: account }),
      400,
      'WebSocket is not enabled for this instance. Configure it first using POST /api/events/websocket/off',
    );
    // Enabled through the configuration endpoint: accepted at once (the upgrade reads the store).
    const res = await node.api.post('/api/events/websocket/quiet', { enabled: true }, { token: account });
    expect(res.status).to.equal(200);
    expect((await upgrade('/ws/quiet', { token: siblingToken })).status).to.equal(101);
    await node.api.post('/api/events/websocket/quiet', { enabled: false }, { token: account });
    expectRefusal(
      await upgrade('/ws/quiet', { token: siblingToken }),
      400,
      'WebSocket is not enabled for this instance. Configure it first using POST /api/events/websocket/quiet',
    );
  });

  it('origins: no Origin, same-origin and ALLOWED_WS_ORIGINS are accepted; others get 403 with an empty body', async () => {
    expect((await upgrade('/ws/live', { token: liveToken })).status).to.equal(101);
    expect((await upgrade('/ws/live', { token: liveToken, origin: ALLOWED })).status).to.equal(101);
    expect((await upgrade('/ws/live', { token: liveToken, origin: 'HTTPS://App.Example.com:443' })).status).to.equal(
      101,
    );
    expect((await upgrade('/ws/live', { token: liveToken, origin: 'https://admin.example.com' })).status).to.equal(101);
    expect((await upgrade('/ws/live', { token: liveToken, origin: gw.httpUrl })).status).to.equal(101);
    for (const origin of ['https://evil.example.com', 'http://app.example.com', 'https://crm.acme.com', 'null']) {
      const res = await upgrade('/ws/live', { token: liveToken, origin });
      expect(res.status, origin).to.equal(403);
      expect(res.text, origin).to.equal('');
      expect(res.headers['content-length']).to.equal('0');
      // Still counted: the rate-limit headers are there.
      expect(res.headers['x-ratelimit-limit']).to.equal('100000');
    }
    // A browser client of `ws` sends Origin when asked to: refused before the upgrade.
    let refused: Error | undefined;
    await TestClient.open(`${gw.wsUrl}/ws/live?token=${encodeURIComponent(liveToken)}`, {
      origin: 'https://evil.example.com',
    }).catch((err: Error) => (refused = err));
    expect(refused?.message).to.equal('upgrade refused with 403');
  });

  it('checks in order: token before origin, origin before the enabled flag', async () => {
    expectRefusal(
      await upgrade('/ws/live', { token: 'not-a-token-at-all', origin: 'https://evil.example.com' }),
      401,
      'Invalid token',
    );
    const blocked = await upgrade('/ws/off', { token: account, origin: 'https://evil.example.com' });
    expect(blocked.status).to.equal(403);
    expect(blocked.text).to.equal('');
  });

  it('other upgrade paths get 404; the 101 carries the X-RateLimit-* headers', async () => {
    expectRefusal(await upgrade('/api/instance/list', { token: account }), 404, 'Not found');
    expectRefusal(await upgrade('/ws', { token: account }), 404, 'Not found');
    expectRefusal(await upgrade('/ws/live/extra', { token: account }), 404, 'Not found');
    const ok = await upgrade('/ws/live', { token: liveToken, 'x-request-id': 'ws-req-1' });
    expect(ok.status).to.equal(101);
    expect(ok.headers['x-ratelimit-limit']).to.equal('100000');
    expect(Number(ok.headers['x-ratelimit-remaining'])).to.be.lessThan(100000);
    expect(Number(ok.headers['x-ratelimit-reset'])).to.be.greaterThan(Date.now() / 1000 - 1);
    expect(ok.headers['x-request-id']).to.equal('ws-req-1');
  });
});

describe('WebSocket: rate limit and HTTPS before the upgrade', function () {
  this.timeout(30_000);
  let node: TestNode;
  let account: string;
  let token: string;
  const harnesses: GatewayHarness[] = [];

  before(async () => {
    node = await startTestNode(NO_RATE_LIMITS);
    account = await node.createAccount('acme');
    token = await node.createInstance(account, { name: 'live', websocketEnabled: true });
  });

  after(async () => {
    for (const h of harnesses) await h.close();
    await node?.stop();
  });

  async function gateway(overrides: Parameters<typeof gatewayFor>[2]) {
    const h = await gatewayFor(node, NO_RATE_LIMITS, overrides);
    harnesses.push(h);
    return h;
  }

  it('the upgrade counts against the Global limit of its token, shared with the HTTP API: 429 with the headers', async () => {
    // Same limiter as the HTTP API (the node's); this gateway's Global limit is 3 per minute.
    const gw = await gateway({ rateLimiter: node.runtime.rateLimiter, rateLimitPerMinute: 3 });
    const fresh = await node.createInstance(account, { name: 'limited', websocketEnabled: true });
    // Two HTTP requests with the token use two of the three.
    expect((await node.api.get('/api/events/getWebsocket/limited', { token: fresh })).status).to.equal(200);
    expect((await node.api.get('/api/instance/list', { token: fresh })).status).to.equal(200);
    const third = await rawUpgrade(gw.httpUrl, '/ws/limited', { token: fresh });
    expect(third.status).to.equal(101);
    expect(third.headers['x-ratelimit-remaining']).to.equal('0');
    const fourth = await rawUpgrade(gw.httpUrl, '/ws/limited', { token: fresh });
    expectRefusal(fourth, 429, 'Rate limit exceeded. Try again later.');
    expect(fourth.body.error.code).to.equal('rate_limited');
    expect(fourth.headers['x-ratelimit-limit']).to.equal('3');
    expect(fourth.headers['x-ratelimit-remaining']).to.equal('0');
    expect(Number(fourth.headers['x-ratelimit-reset'])).to.be.within(Date.now() / 1000, Date.now() / 1000 + 61);
    // Rate limiting comes first: even a refused token is counted (per client address) and refused with 429.
    const ipLimited = await gateway({ rateLimiter: new MemoryRateLimiter(), rateLimitPerMinute: 1 });
    expectRefusal(
      await rawUpgrade(ipLimited.httpUrl, '/ws/limited'),
      401,
      'Missing token in header, Authorization header, or query parameter',
    );
    expectRefusal(
      await rawUpgrade(ipLimited.httpUrl, '/ws/limited', { token: 'bad-bad-bad' }),
      429,
      'Rate limit exceeded. Try again later.',
    );
  });

  it('HTTPS required: plain HTTP gets 403 `HTTPS is required`; a trusted proxy saying https is accepted', async () => {
    const strict = await gateway({ requireHttps: true, trustProxy: false });
    expectRefusal(await rawUpgrade(strict.httpUrl, '/ws/live', { token }), 403, 'HTTPS is required');
    expectRefusal(
      await rawUpgrade(strict.httpUrl, '/ws/live', { token, 'x-forwarded-proto': 'https' }),
      403,
      'HTTPS is required',
    );
    const proxied = await gateway({ requireHttps: true, trustProxy: true });
    expect((await rawUpgrade(proxied.httpUrl, '/ws/live', { token, 'x-forwarded-proto': 'https' })).status).to.equal(
      101,
    );
    expectRefusal(
      await rawUpgrade(proxied.httpUrl, '/ws/live', { token, 'x-forwarded-proto': 'http' }),
      403,
      'HTTPS is required',
    );
    // Behind the proxy, same-origin is the public scheme and host the proxy reports.
    const sameOrigin = await rawUpgrade(proxied.httpUrl, '/ws/live', {
      token,
      'x-forwarded-proto': 'https',
      'x-forwarded-host': 'wa.example.com',
      origin: 'https://wa.example.com',
    });
    expect(sameOrigin.status).to.equal(101);
  });
});
