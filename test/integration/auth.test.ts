import { expect } from 'chai';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { ApiResponse, TestNode } from '../helpers/test-node.js';
import {
  NO_RATE_LIMITS,
  TOKEN_FORMS,
  createInstanceRaw,
  expectError,
  expectOk,
  getSettings,
  listNames,
  postSettings,
  withToken,
} from './support.js';
import type { TokenForm } from './support.js';

const MISSING = 'Missing token in header, Authorization header, or query parameter';

describe('authentication and ownership (spec section 5)', () => {
  let node: TestNode;
  /** Account X owns `alpha`, `beta` and `gamma-x`; account Y owns `gamma`. */
  let accountX: string;
  let accountY: string;
  let alphaToken: string;
  let betaToken: string;
  let gammaToken: string;

  before(async () => {
    node = await startTestNode(NO_RATE_LIMITS);
    accountX = await node.createAccount('acct-x');
    accountY = await node.createAccount('acct-y');
    alphaToken = await node.createInstance(accountX, { name: 'alpha' });
    betaToken = await node.createInstance(accountX, { name: 'beta' });
    gammaToken = await node.createInstance(accountY, { name: 'gamma' });
  });

  after(async () => {
    await node.stop();
  });

  /** POST settings then GET settings on `instance`, presenting `token` in `form`. */
  async function settingsRoundTrip(
    instance: string,
    token: string,
    form: TokenForm,
  ): Promise<[ApiResponse, ApiResponse]> {
    const post = withToken(`/api/instance/settings/${instance}`, token, form);
    const updated = await node.api.post(post.path, { autoReadMessages: true }, post.options);
    const get = withToken(`/api/instance/getSettings/${instance}`, token, form);
    const read = await node.api.get(get.path, get.options);
    return [updated, read];
  }

  describe('token forms', () => {
    for (const kind of ['TokenAccount', 'TokenInstance'] as const) {
      for (const form of TOKEN_FORMS) {
        it(`accepts a ${kind} sent as ${form}`, async () => {
          const instance = `form-${kind === 'TokenAccount' ? 'acc' : 'ins'}-${form}`;
          const instanceToken = await node.createInstance(accountX, { name: instance });
          const [updated, read] = await settingsRoundTrip(
            instance,
            kind === 'TokenAccount' ? accountX : instanceToken,
            form,
          );
          expectOk(updated);
          expect(updated.body.settings.autoReadMessages).to.equal(true);
          expectOk(read);
          expect(read.body.settings.autoReadMessages).to.equal(true);
        });
      }
    }
  });

  describe('missing and unknown tokens', () => {
    it('refuses a request with no token at all with 401', async () => {
      expectError(await postSettings(node, 'alpha', undefined, { autoReadMessages: true }), 401, MISSING);
      expectError(await node.api.get('/api/instance/getSettings/alpha'), 401, MISSING);
    });

    for (const form of TOKEN_FORMS) {
      it(`refuses an unknown token sent as ${form} with 401 Invalid token`, async () => {
        const { path, options } = withToken('/api/instance/getSettings/alpha', 'no-such-token-0123456789', form);
        expectError(await node.api.get(path, options), 401, 'Invalid token');
      });
    }

    it('refuses any token in the query string of a plain HTTP request, naming the header to use', async () => {
      const queryOnly =
        'A token in the query string is accepted only on WebSocket upgrades: send it in the token header (or Authorization: Bearer)';
      for (const token of [accountX, alphaToken, 'no-such-token-0123456789']) {
        const { path } = withToken('/api/instance/getSettings/alpha', token, 'query');
        expectError(await node.api.get(path), 401, queryOnly);
        const post = withToken('/api/instance/settings/alpha', token, 'query');
        expectError(await node.api.post(post.path, { autoReadMessages: false }), 401, queryOnly);
      }
      const list = withToken('/api/instance/list', accountX, 'query');
      expectError(await node.api.get(list.path), 401, queryOnly);
    });

    it('refuses a blank token header as missing', async () => {
      expectError(await getSettings(node, 'alpha', '   '), 401, MISSING);
    });
  });

  describe('admin endpoints', () => {
    it('require the token header (401 Missing token in header)', async () => {
      expectError(await node.api.get('/api/admin/accounts'), 401, 'Missing token in header');
    });

    it('do not accept the global token in the query string', async () => {
      const res = await node.api.get(`/api/admin/accounts?token=${encodeURIComponent(ADMIN_TOKEN)}`);
      expectError(res, 401, 'Missing token in header');
    });

    it('never take the global token from a URL: account-webhook endpoints answer 401', async () => {
      const url = (path: string) => `${path}?account=acct-x&token=${encodeURIComponent(ADMIN_TOKEN)}`;
      const before = await node.api.get('/api/account/webhook', { token: accountX });
      for (const res of [
        await node.api.get(url('/api/account/webhook')),
        await node.api.request('PATCH', url('/api/account/webhook'), { url: 'https://hooks.example.com/stolen' }),
        await node.api.get(url('/api/account/webhook/deadLetters')),
        await node.api.post(url('/api/account/webhook/rotate-secret'), {}),
        await node.api.post(url('/api/account/webhook/test'), {}),
      ]) {
        expect(res.status, res.text).to.equal(401);
      }
      expect((await node.api.get('/api/account/webhook', { token: accountX })).body).to.deep.equal(before.body);
      // The same in the header is the operator acting on the named account.
      expectOk(await node.api.get('/api/account/webhook?account=acct-x', { token: ADMIN_TOKEN }));
    });

    it('never take the global token from a URL on :instance routes: 401, not 403', async () => {
      const res = await node.api.get(`/api/instance/getSettings/alpha?token=${encodeURIComponent(ADMIN_TOKEN)}`);
      expect(res.status, res.text).to.equal(401);
    });

    it('accept the global token in the header', async () => {
      expectOk(await node.api.get('/api/admin/accounts', { token: ADMIN_TOKEN }));
    });

    it('refuse an account token with 403', async () => {
      expectError(
        await node.api.get('/api/admin/accounts', { token: accountX }),
        403,
        'This operation requires the global token',
      );
    });

    it('refuse an instance token with 403', async () => {
      expectError(
        await node.api.get('/api/admin/accounts', { token: alphaToken }),
        403,
        'This operation requires the global token',
      );
    });
  });

  describe('TokenInstance scope', () => {
    it('cannot operate a sibling instance of the same account (403)', async () => {
      expectError(
        await postSettings(node, 'beta', alphaToken, { autoReadMessages: true }),
        403,
        'Instance token does not match requested instance',
      );
      expectError(await getSettings(node, 'beta', alphaToken), 403, 'Instance token does not match requested instance');
      const beta = await getSettings(node, 'beta', betaToken);
      expectOk(beta);
      expect(beta.body.settings.autoReadMessages).to.equal(false);
    });

    it('gets 401 Invalid instance token on a name its account does not have', async () => {
      expectError(await getSettings(node, 'no-such-instance', alphaToken), 401, 'Invalid instance token');
      expectError(
        await postSettings(node, 'no-such-instance', alphaToken, { autoReadMessages: true }),
        401,
        'Invalid instance token',
      );
    });

    it("gets 401 Invalid instance token on another account's instance, which is left unchanged", async () => {
      expectError(
        await postSettings(node, 'gamma', alphaToken, { autoReadMessages: true }),
        401,
        'Invalid instance token',
      );
      const gamma = await getSettings(node, 'gamma', gammaToken);
      expect(gamma.body.settings.autoReadMessages).to.equal(false);
    });

    it('cannot create instances (403) and nothing is created', async () => {
      const before = await listNames(node, accountX);
      expectError(
        await createInstanceRaw(node, alphaToken, { name: 'made-by-instance' }),
        403,
        'This operation requires an account token',
      );
      expect(await listNames(node, accountX)).to.deep.equal(before);
    });

    it('cannot delete its own instance (403) and the instance still exists', async () => {
      expectError(
        await node.api.delete('/api/instance/delete/alpha', { token: alphaToken }),
        403,
        'This operation requires an account token',
      );
      expectOk(await getSettings(node, 'alpha', alphaToken));
      expect(await listNames(node, accountX, '?instanceName=alpha')).to.deep.equal(['alpha']);
    });

    it('sees only its own instance in the list', async () => {
      const res = await node.api.get('/api/instance/list', { token: alphaToken });
      expectOk(res);
      expect(res.body.message).to.equal('1 Instance found');
      expect(res.body.instances.map((i: { name: string }) => i.name)).to.deep.equal(['alpha']);
    });

    it('cannot widen its view with instanceName (ignored with a TokenInstance, as in the hosted product)', async () => {
      for (const query of ['?instanceName=beta', '?instanceName=gamma', '?instanceName=beta,gamma']) {
        const res = await node.api.get(`/api/instance/list${query}`, { token: alphaToken });
        expectOk(res);
        expect(res.body.message, query).to.equal('1 Instance found');
        expect(
          res.body.instances.map((i: { name: string }) => i.name),
          query,
        ).to.deep.equal(['alpha']);
      }
      expect(await listNames(node, alphaToken, '?instanceName=alpha,beta')).to.deep.equal(['alpha']);
    });
  });

  describe('TokenAccount scope', () => {
    it("gets 403 on another account's instance, which is left unchanged", async () => {
      expectError(
        await postSettings(node, 'gamma', accountX, { autoReadMessages: true }),
        403,
        'Instance does not belong to your account',
      );
      expectError(await getSettings(node, 'gamma', accountX), 403, 'Instance does not belong to your account');
      const gamma = await getSettings(node, 'gamma', accountY);
      expectOk(gamma);
      expect(gamma.body.settings.autoReadMessages).to.equal(false);
    });

    it("cannot delete another account's instance", async () => {
      expectError(
        await node.api.delete('/api/instance/delete/gamma', { token: accountX }),
        403,
        'Instance does not belong to your account',
      );
      expectOk(await getSettings(node, 'gamma', gammaToken));
    });

    it('gets 404 Instance not found on a name that exists nowhere', async () => {
      expectError(
        await postSettings(node, 'exists-nowhere', accountX, { autoReadMessages: true }),
        404,
        'Instance not found',
      );
      expectError(await getSettings(node, 'exists-nowhere', accountX), 404, 'Instance not found');
    });

    it("does not list another account's instances, even by name", async () => {
      expect(await listNames(node, accountY)).to.deep.equal(['gamma']);
      expect(await listNames(node, accountX, '?instanceName=gamma')).to.deep.equal([]);
    });
  });

  describe('revocation and the global token', () => {
    it('rotating an account token revokes the old one and the new one works', async () => {
      const old = await node.createAccount('acct-rotate');
      await node.createInstance(old, { name: 'rotated' });
      const res = await node.api.post('/api/admin/accounts/acct-rotate/token', undefined, { token: ADMIN_TOKEN });
      expectOk(res);
      const fresh = res.body.account.token as string;
      expect(fresh).to.be.a('string').and.not.equal(old);
      expectError(await node.api.get('/api/instance/list', { token: old }), 401, 'Invalid token');
      expectError(await getSettings(node, 'rotated', old), 401, 'Invalid token');
      expect(await listNames(node, fresh)).to.deep.equal(['rotated']);
      expectOk(await getSettings(node, 'rotated', fresh));
    });

    it('rotating the token of an unknown account gives 404', async () => {
      const res = await node.api.post('/api/admin/accounts/no-such-account/token', undefined, { token: ADMIN_TOKEN });
      expectError(res, 404, 'Account not found');
    });

    it('the global token cannot operate instances (403)', async () => {
      const denied = 'An account or instance token is required';
      expectError(await postSettings(node, 'alpha', ADMIN_TOKEN, { autoRejectCalls: true }), 403, denied);
      expectError(await getSettings(node, 'alpha', ADMIN_TOKEN), 403, denied);
      expectError(await node.api.get('/api/instance/list', { token: ADMIN_TOKEN }), 403, denied);
      expectError(await node.api.delete('/api/instance/delete/alpha', { token: ADMIN_TOKEN }), 403, denied);
      expectError(
        await createInstanceRaw(node, ADMIN_TOKEN, { name: 'by-admin' }),
        403,
        'This operation requires an account token',
      );
      const alpha = await getSettings(node, 'alpha', alphaToken);
      expect(alpha.body.settings.autoRejectCalls).to.equal(false);
    });
  });
});
