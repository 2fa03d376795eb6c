import { expect } from 'chai';
import { AUTH_NAMESPACE } from '../../src/store/namespaces.js';
import { ADMIN_TOKEN, startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { TestClient } from '../helpers/ws-harness.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { NO_RATE_LIMITS, expectOk } from './support.js';
import { until } from '../helpers/until.js';

/**
 * Spec section 5, "a token can be revoked": rotation of TokenInstance and TokenAccount, and the operator's
 * account disable, enable and delete. The WebSocket refresh period is a minute here, so a socket closed
 * within a second was closed by the credential news, not by the periodic re-check.
 */
const ENV = { ...NO_RATE_LIMITS, ALLOW_PRIVATE_URLS: 'true', WS_CONFIG_REFRESH_MS: '60000' };

describe('tokens that can be revoked, and accounts an operator disables or deletes', function () {
  this.timeout(30_000);
  let node: TestNode;
  let seq = 0;
  const clients: TestClient[] = [];

  before(async () => {
    node = await startTestNode(ENV);
  });
  afterEach(() => {
    for (const c of clients.splice(0)) c.ws.terminate();
  });
  after(async () => {
    await node?.stop();
  });

  const fresh = (prefix: string) => `${prefix}-${++seq}`;

  async function linked(accountToken: string, name: string): Promise<string> {
    const token = await node.createInstance(accountToken, { name, websocketEnabled: true });
    expectOk(await node.api.get(`/api/instance/connect/${name}`, { token }));
    const number = `55119${String(700_000 + seq).padStart(8, '0')}`;
    expectOk(await node.api.post(`/api/sandbox/link/${name}`, { number }, { token }));
    return token;
  }

  async function socket(name: string, token: string): Promise<TestClient> {
    const client = await TestClient.open(
      `${node.url.replace(/^http/, 'ws')}/ws/${name}?token=${encodeURIComponent(token)}`,
    );
    clients.push(client);
    return client;
  }

  /** Resolves with the close code if the socket closes within `ms`, else undefined. */
  async function closedWithin(client: TestClient, ms: number): Promise<number | undefined> {
    const timeout = new Promise<undefined>((resolve) => setTimeout(() => resolve(undefined), ms));
    return Promise.race([client.closed.then((c) => c.code), timeout]);
  }

  async function instanceOf(name: string, accountName: string) {
    const account = await node.store.accounts.findByName(accountName);
    return (await node.store.instances.findByName(account!.id, name))!;
  }

  describe('POST /api/instance/token/:instance', () => {
    it('issues a new TokenInstance; the old one answers 401 at once and its WebSockets close with 4001', async () => {
      const accountName = fresh('rot');
      const accountToken = await node.createAccount(accountName);
      const name = fresh('inst');
      const old = await linked(accountToken, name);
      const byAccount = await socket(name, accountToken);
      const byOld = await socket(name, old);

      const res = await node.api.post(`/api/instance/token/${name}`, undefined, { token: accountToken });
      expectOk(res);
      const token = res.body.instance.token as string;
      expect(res.body.instance.name).to.equal(name);
      expect(token).to.be.a('string').and.not.equal(old);

      expect(await closedWithin(byOld, 1000)).to.equal(4001);
      expect((await node.api.get(`/api/instance/getSettings/${name}`, { token: old })).status).to.equal(401);
      expectOk(await node.api.get(`/api/instance/getSettings/${name}`, { token }));
      // A socket opened with the account token is not concerned.
      expect(await closedWithin(byAccount, 300)).to.equal(undefined);
      const fresh2 = await socket(name, token);
      expect(fresh2.ws.readyState).to.equal(fresh2.ws.OPEN);
      const stored = await instanceOf(name, accountName);
      expect(stored.tokenHash).to.not.equal(undefined);
    });

    it('is for the TokenAccount only: the instance token gets 403 and nothing changes', async () => {
      const accountToken = await node.createAccount(fresh('rot'));
      const name = fresh('inst');
      const token = await node.createInstance(accountToken, { name });
      const res = await node.api.post(`/api/instance/token/${name}`, undefined, { token });
      expect(res.status, res.text).to.equal(403);
      expectOk(await node.api.get(`/api/instance/getSettings/${name}`, { token }));
      const other = await node.createAccount(fresh('rot'));
      expect((await node.api.post(`/api/instance/token/${name}`, undefined, { token: other })).status).to.equal(403);
    });

    it('puts the new token in the webhook envelopes from then on', async () => {
      const receiver = await WebhookReceiver.start();
      try {
        const accountToken = await node.createAccount(fresh('rot'));
        const name = fresh('inst');
        const old = await linked(accountToken, name);
        expectOk(
          await node.api.post(
            `/api/events/webhook/${name}`,
            { url: receiver.url, enabled: true, events: ['message.exchange'] },
            { token: old },
          ),
          201,
        );
        const res = await node.api.post(`/api/instance/token/${name}`, undefined, { token: accountToken });
        const token = res.body.instance.token as string;
        expectOk(await node.api.post(`/api/sandbox/inbound/${name}`, { from: '5511900000999', text: 'hi' }, { token }));
        await until(() => receiver.events('message.exchange').length > 0, 'the webhook', 10_000);
        expect(receiver.events('message.exchange')[0]!.body.instanceData.token).to.equal(token);
      } finally {
        await receiver.stop();
      }
    });
  });

  describe('POST /api/account/token', () => {
    it("rotates the calling account's own token; its WebSockets close with 4001, its instances' stay", async () => {
      const accountName = fresh('self');
      const old = await node.createAccount(accountName);
      const name = fresh('inst');
      const instanceToken = await linked(old, name);
      const byAccount = await socket(name, old);
      const byInstance = await socket(name, instanceToken);

      const res = await node.api.post('/api/account/token', undefined, { token: old });
      expectOk(res);
      expect(res.body.account.name).to.equal(accountName);
      const token = res.body.account.token as string;

      expect(await closedWithin(byAccount, 1000)).to.equal(4001);
      expect(await closedWithin(byInstance, 300)).to.equal(undefined);
      expect((await node.api.get('/api/instance/list', { token: old })).status).to.equal(401);
      expectOk(await node.api.get('/api/instance/list', { token }));
    });

    it('refuses an instance token (403) and the global token (403)', async () => {
      const accountToken = await node.createAccount(fresh('self'));
      const name = fresh('inst');
      const instanceToken = await node.createInstance(accountToken, { name });
      expect((await node.api.post('/api/account/token', undefined, { token: instanceToken })).status).to.equal(403);
      expect((await node.api.post('/api/account/token', undefined, { token: ADMIN_TOKEN })).status).to.equal(403);
      expectOk(await node.api.get('/api/instance/list', { token: accountToken }));
    });
  });

  describe('POST /api/admin/accounts/:name/disable and enable', () => {
    it('disabled: every token of the account answers 401, sockets close with 4001, instances stop and keep their link', async () => {
      const accountName = fresh('dis');
      const accountToken = await node.createAccount(accountName);
      const name = fresh('inst');
      const instanceToken = await linked(accountToken, name);
      const ws = await socket(name, instanceToken);
      const { id } = await instanceOf(name, accountName);
      expect(node.runtime.host.get(id)).to.not.equal(undefined);

      const res = await node.api.post(`/api/admin/accounts/${accountName}/disable`, undefined, { token: ADMIN_TOKEN });
      expectOk(res);
      expect(res.body.account).to.include({ name: accountName, disabled: true });

      expect(await closedWithin(ws, 1000)).to.equal(4001);
      const refused = await node.api.get(`/api/instance/getSettings/${name}`, { token: instanceToken });
      expect(refused.status).to.equal(401);
      expect((await node.api.get('/api/instance/list', { token: accountToken })).status).to.equal(401);
      await until(() => node.runtime.host.get(id) === undefined, 'the actor to stop', 5000);
      // The session stays: enabling needs no new link.
      expect(await node.store.ownedState.get(id, AUTH_NAMESPACE, 'creds')).to.not.equal(undefined);
      const listed = await node.api.get('/api/admin/accounts', { token: ADMIN_TOKEN });
      const entry = (listed.body.accounts as { name: string; disabled: boolean }[]).find((a) => a.name === accountName);
      expect(entry?.disabled).to.equal(true);

      expectOk(await node.api.post(`/api/admin/accounts/${accountName}/enable`, undefined, { token: ADMIN_TOKEN }));
      expectOk(await node.api.get(`/api/instance/getSettings/${name}`, { token: instanceToken }));
      await until(() => node.runtime.host.get(id) !== undefined, 'the actor to run again', 5000);
      // Connected again on the link it kept: it sends at once.
      const sent = await node.api.post(
        `/api/message/text/${name}`,
        { number: '5511900000998', message: 'back' },
        { token: instanceToken },
      );
      expect(sent.status, sent.text).to.equal(200);
    });

    it('answers 404 for an unknown account and needs the global token', async () => {
      expect(
        (await node.api.post('/api/admin/accounts/nobody/disable', undefined, { token: ADMIN_TOKEN })).status,
      ).to.equal(404);
      const accountToken = await node.createAccount(fresh('dis'));
      const res = await node.api.post('/api/admin/accounts/x/disable', undefined, { token: accountToken });
      expect(res.status).to.equal(403);
    });
  });

  describe('DELETE /api/admin/accounts/:name', () => {
    it('refuses an account with instances (409) unless force=true, which deletes them first', async () => {
      const accountName = fresh('del');
      const accountToken = await node.createAccount(accountName);
      const name = fresh('inst');
      const instanceToken = await linked(accountToken, name);
      const ws = await socket(name, instanceToken);

      const refused = await node.api.delete(`/api/admin/accounts/${accountName}`, { token: ADMIN_TOKEN });
      expect(refused.status, refused.text).to.equal(409);
      expectOk(await node.api.get(`/api/instance/getSettings/${name}`, { token: instanceToken }));

      const res = await node.api.delete(`/api/admin/accounts/${accountName}?force=true`, { token: ADMIN_TOKEN });
      expectOk(res);
      expect(res.body.account).to.deep.equal({ name: accountName, deletedInstances: [name] });
      expect(await closedWithin(ws, 1000)).to.be.oneOf([1001, 4001]);
      expect((await node.api.get(`/api/instance/getSettings/${name}`, { token: instanceToken })).status).to.equal(401);
      expect((await node.api.get('/api/instance/list', { token: accountToken })).status).to.equal(401);
      expect(await node.store.accounts.findByName(accountName)).to.equal(undefined);
      const again = await node.api.delete(`/api/admin/accounts/${accountName}`, { token: ADMIN_TOKEN });
      expect(again.status).to.equal(404);
    });

    it('deletes an account without instances, and its name can be used again', async () => {
      const accountName = fresh('del');
      await node.createAccount(accountName);
      expectOk(await node.api.delete(`/api/admin/accounts/${accountName}`, { token: ADMIN_TOKEN }));
      await node.createAccount(accountName);
    });
  });
});
