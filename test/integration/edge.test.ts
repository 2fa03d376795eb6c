import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { ApiResponse, TestNode } from '../helpers/test-node.js';
import {
  TOKEN_FORMS,
  createInstanceRaw,
  expectError,
  expectOk,
  getSettings,
  postSettings,
  withToken,
} from './support.js';

const RATE_LIMITED = 'Rate limit exceeded. Try again later.';

/** The three X-RateLimit-* headers are present; returns Remaining. */
function expectRateHeaders(res: ApiResponse, limit: number): number {
  const label = `${res.status} ${res.text}`;
  expect(res.headers.get('x-ratelimit-limit'), label).to.equal(String(limit));
  const remaining = res.headers.get('x-ratelimit-remaining');
  expect(remaining, label).to.match(/^\d+$/);
  const reset = Number(res.headers.get('x-ratelimit-reset'));
  expect(Number.isInteger(reset), label).to.equal(true);
  expect(reset, label).to.be.greaterThan(Date.now() / 1000);
  return Number(remaining);
}

describe('edge: rate limits, HTTPS, CORS, request ids (spec sections 1 and 8)', () => {
  describe('rate limits', () => {
    let node: TestNode;
    const tokens: string[] = [];

    before(async () => {
      node = await startTestNode({ RATE_LIMIT_PER_MINUTE: '5', RATE_LIMIT_CREATE_PER_MINUTE: '2' });
      // Five admin calls: exactly the global token's budget on this node.
      for (const name of ['rl-a', 'rl-b', 'rl-c', 'rl-d', 'rl-e']) tokens.push(await node.createAccount(name));
    });

    after(async () => {
      await node.stop();
    });

    const list = (token: string) => node.api.get('/api/instance/list', { token });

    it('sends the three headers on 200, 401 and 404 responses', async () => {
      const ok = await list(tokens[3]!);
      expectOk(ok);
      expect(expectRateHeaders(ok, 5)).to.equal(4);
      const invalid = await list('unknown-token-for-rate-headers');
      expectError(invalid, 401, 'Invalid token');
      expectRateHeaders(invalid, 5);
      const missing = await node.api.get('/api/instance/list');
      expectError(missing, 401, 'Missing token in header, Authorization header, or query parameter');
      expectRateHeaders(missing, 5);
      const notFound = await node.api.get('/api/no-such-route', { token: tokens[3]! });
      expectError(notFound, 404, 'Not found');
      expect(expectRateHeaders(notFound, 5)).to.equal(3);
    });

    it('refuses the 6th request of one token with 429, headers still present', async () => {
      for (let i = 1; i <= 5; i++) {
        const res = await list(tokens[0]!);
        expectOk(res);
        expect(expectRateHeaders(res, 5)).to.equal(5 - i);
      }
      const sixth = await list(tokens[0]!);
      expectError(sixth, 429, RATE_LIMITED);
      expect(expectRateHeaders(sixth, 5)).to.equal(0);
    });

    it('gives another token its own bucket', async () => {
      const res = await list(tokens[1]!);
      expectOk(res);
      expect(expectRateHeaders(res, 5)).to.equal(4);
    });

    it('shares one bucket between the header and Bearer forms of a token', async () => {
      const forms = [...TOKEN_FORMS, 'header', 'bearer', 'header'] as const;
      for (const [i, form] of forms.entries()) {
        const { path, options } = withToken('/api/instance/list', tokens[2]!, form);
        const res = await node.api.get(path, options);
        expectOk(res);
        expect(expectRateHeaders(res, 5), form).to.equal(4 - i);
      }
      const { path, options } = withToken('/api/instance/list', tokens[2]!, 'bearer');
      expectError(await node.api.get(path, options), 429, RATE_LIMITED);
    });

    it('limits instance creation separately (3rd creation → 429)', async () => {
      const token = tokens[1]!;
      const globalBefore = expectRateHeaders(await list(token), 5);
      expectOk(await createInstanceRaw(node, token, { name: 'rl-one' }), 201);
      const second = await createInstanceRaw(node, token, { name: 'rl-two' });
      expectOk(second, 201);
      expect(expectRateHeaders(second, 2)).to.equal(0);
      const third = await createInstanceRaw(node, token, { name: 'rl-three' });
      expectError(third, 429, RATE_LIMITED);
      expectRateHeaders(third, 2);
      // Creations do not draw on the same token's global bucket.
      const after = await list(token);
      expectOk(after);
      expect(expectRateHeaders(after, 5)).to.equal(globalBefore - 1);
      expect(after.body.instances.map((i: { name: string }) => i.name)).to.deep.equal(['rl-one', 'rl-two']);
    });

    it('cannot bypass the creation limit by changing the letter case of the path', async () => {
      const token = tokens[4]!;
      expectOk(await createInstanceRaw(node, token, { name: 'case-one' }), 201);
      expectOk(await createInstanceRaw(node, token, { name: 'case-two' }), 201);
      const bypass = await node.api.post('/api/instance/NEW', { name: 'case-three' }, { token });
      expectError(bypass, 429, RATE_LIMITED);
    });

    it('never rate-limits /health', async () => {
      for (let i = 0; i < 8; i++) {
        const res = await node.api.get('/health');
        expect(res.status).to.equal(200);
        expect(res.body.status).to.equal('ok');
      }
    });
  });

  describe('HTTPS only', () => {
    let plain: TestNode;
    let proxied: TestNode;
    let insecure: TestNode;
    const admin = (n: TestNode, headers: Record<string, string> = {}) =>
      n.api.get('/api/admin/accounts', { token: ADMIN_TOKEN, headers });

    before(async () => {
      plain = await startTestNode({ HOST: '0.0.0.0' });
      proxied = await startTestNode({ HOST: '0.0.0.0', TRUST_PROXY: 'true' });
      insecure = await startTestNode({ HOST: '0.0.0.0', ALLOW_INSECURE_HTTP: 'true' });
    });

    after(async () => {
      await Promise.all([plain, proxied, insecure].map((n) => n.stop()));
    });

    it('refuses plain HTTP on a non-loopback listener with 403', async () => {
      expectError(await admin(plain), 403, 'HTTPS is required');
      expectError(await plain.api.get('/api/instance/list'), 403, 'HTTPS is required');
      expectError(
        await plain.api.post('/api/instance/new', { name: 'x' }, { token: 'whatever-token-1234' }),
        403,
        'HTTPS is required',
      );
      expectError(await plain.api.get('/api/no-such-route'), 403, 'HTTPS is required');
    });

    it('still answers /health over plain HTTP', async () => {
      const res = await plain.api.get('/health');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: true, status: 'ok' });
    });

    it('accepts X-Forwarded-Proto: https from a trusted proxy', async () => {
      expectOk(await admin(proxied, { 'x-forwarded-proto': 'https' }));
    });

    it('refuses a trusted proxy that forwards plain HTTP', async () => {
      expectError(await admin(proxied), 403, 'HTTPS is required');
      expectError(await admin(proxied, { 'x-forwarded-proto': 'http' }), 403, 'HTTPS is required');
    });

    it('ignores X-Forwarded-Proto when TRUST_PROXY is off', async () => {
      expectError(await admin(plain, { 'x-forwarded-proto': 'https' }), 403, 'HTTPS is required');
    });

    it('ALLOW_INSECURE_HTTP lifts the requirement', async () => {
      expectOk(await admin(insecure));
    });
  });

  describe('CORS', () => {
    const ALLOWED = 'https://app.example.com';
    /** Authorised for another account only: its preflight passes, its real requests with our token must not. */
    const FOREIGN = 'https://other.example.com';
    let node: TestNode;
    let token: string;

    before(async () => {
      node = await startTestNode();
      token = await node.createAccount('cors-acct', { allowedOrigins: [ALLOWED] });
      await node.createAccount('cors-other', { allowedOrigins: [FOREIGN] });
      await node.createInstance(token, { name: 'web' });
    });

    after(async () => {
      await node.stop();
    });

    const preflight = (origin: string) =>
      node.api.request('OPTIONS', '/api/instance/list', undefined, {
        headers: { origin, 'access-control-request-method': 'GET', 'access-control-request-headers': 'token' },
      });

    it('answers a preflight from an allowed origin with 204 and the allow headers', async () => {
      const res = await preflight(ALLOWED);
      expect(res.status).to.equal(204);
      expect(res.headers.get('access-control-allow-origin')).to.equal(ALLOWED);
      expect(res.headers.get('access-control-allow-methods')).to.equal('GET, POST, PUT, DELETE, OPTIONS');
      expect(res.headers.get('access-control-allow-headers')).to.equal('Content-Type, Authorization, token');
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    });

    it('refuses a preflight from an unknown origin with 403 and no allow-origin', async () => {
      const res = await preflight('https://evil.example.net');
      expectError(res, 403, 'Origin not allowed');
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    });

    it('lets the account token through from its allowed origin', async () => {
      const res = await node.api.get('/api/instance/list', { token, headers: { origin: ALLOWED } });
      expectOk(res);
      expect(res.body.instances.map((i: { name: string }) => i.name)).to.deep.equal(['web']);
      expect(res.headers.get('access-control-allow-origin')).to.equal(ALLOWED);
      expect(res.headers.get('access-control-expose-headers')).to.equal('Content-Length, X-Ignored-Fields');
      expect(res.headers.get('access-control-allow-credentials')).to.equal(null);
    });

    for (const origin of [FOREIGN, 'https://evil.example.net']) {
      it(`refuses the account token from ${origin} and changes nothing`, async () => {
        const read = await node.api.get('/api/instance/list', { token, headers: { origin } });
        expectError(read, 403, 'Origin not allowed');
        expect(read.headers.get('access-control-allow-origin')).to.equal(null);
        const write = await postSettings(node, 'web', token, { autoRejectCalls: true }, { headers: { origin } });
        expectError(write, 403, 'Origin not allowed');
        const after = await getSettings(node, 'web', token);
        expectOk(after);
        expect(after.body.settings.autoRejectCalls).to.equal(false);
      });
    }

    it('leaves requests without an Origin header unaffected', async () => {
      const res = await node.api.get('/api/instance/list', { token });
      expectOk(res);
      expect(res.headers.get('access-control-allow-origin')).to.equal(null);
      expectOk(await postSettings(node, 'web', token, { ignoreStatus: true }));
      expect((await getSettings(node, 'web', token)).body.settings.ignoreStatus).to.equal(true);
    });
  });

  describe('request ids, unknown routes and /health', () => {
    let node: TestNode;

    before(async () => {
      node = await startTestNode();
    });

    after(async () => {
      await node.stop();
    });

    it('echoes a given X-Request-Id', async () => {
      const res = await node.api.get('/health', { headers: { 'x-request-id': 'trace-42.abc:def' } });
      expect(res.headers.get('x-request-id')).to.equal('trace-42.abc:def');
      const failed = await node.api.get('/api/instance/list', { headers: { 'x-request-id': 'trace-43' } });
      expectError(failed, 401, 'Missing token in header, Authorization header, or query parameter');
      expect(failed.headers.get('x-request-id')).to.equal('trace-43');
    });

    it('generates a request id when none (or an unusable one) is given', async () => {
      const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
      const first = (await node.api.get('/health')).headers.get('x-request-id');
      const second = (await node.api.get('/health')).headers.get('x-request-id');
      expect(first).to.match(uuid);
      expect(second).to.match(uuid).and.not.equal(first);
      const bad = await node.api.get('/health', { headers: { 'x-request-id': 'has spaces <script>' } });
      expect(bad.headers.get('x-request-id')).to.match(uuid);
    });

    it('answers an unknown route with a 404 envelope', async () => {
      expectError(await node.api.get('/api/no-such-route'), 404, 'Not found');
      expectError(await node.api.get('/nothing-here', { token: ADMIN_TOKEN }), 404, 'Not found');
    });

    it('answers a known path with a wrong method 405, whichever router of its prefix declares it', async () => {
      // /api/instance has several routers: `new` is the first one's, `connect` a later one's.
      for (const [method, path, allowed] of [
        ['GET', '/api/instance/new', 'POST'],
        ['DELETE', '/api/instance/connect/web', 'GET'],
        ['PUT', '/API/Instance/Connect/web', 'GET'],
      ] as const) {
        const res = await node.api.request(method, path);
        expectError(res, 405, 'Method not allowed');
        expect(res.headers.get('allow'), `${method} ${path}`).to.include(allowed);
      }
      expectError(await node.api.get('/api/instance/no-such-route'), 404, 'Not found');
    });

    it('answers /health with 200 {success: true, status: ok}', async () => {
      const res = await node.api.get('/health');
      expect(res.status).to.equal(200);
      expect(res.body).to.include({ success: true, status: 'ok' });
    });
  });
});
