import { expect } from 'chai';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { expectError, expectOk, getSettings, listNames, postSettings } from './support.js';

const PROXY_PASSWORD = 'restart-proxy-S3CRET-5150';
const WEBHOOK_AUTH = 'Bearer restart-hook-S3CRET-8086';

describe('restart on the same data directory', () => {
  let node: TestNode | undefined;
  let dataDir: string;
  let accountToken: string;
  let instanceToken: string;
  let settingsBefore: Record<string, unknown>;

  before(async () => {
    const first = await startTestNode();
    node = first;
    dataDir = first.dataDir;
    accountToken = await first.createAccount('durable');
    const created = await first.api.post(
      '/api/instance/new',
      {
        name: 'keeper',
        proxyEnabled: true,
        proxyHost: 'proxy.example.com',
        proxyPort: '1080',
        proxyProtocol: 'socks5',
        proxyUser: 'keeper-user',
        proxyPassword: PROXY_PASSWORD,
        webhookEnabled: true,
        webhookURL: 'https://hooks.example.com/keeper',
        webhookAuthorization: WEBHOOK_AUTH,
        webhookEvents: ['message.exchange', 'instance.state'],
        ignoreGroupMessages: true,
        settings: { callRejectMessage: 'call me later', autoRejectCalls: true },
      },
      { token: accountToken },
    );
    expectOk(created, 201);
    instanceToken = created.body.instance.token as string;
    const updated = await postSettings(first, 'keeper', instanceToken, { keepOnlineStatus: true });
    expectOk(updated);
    settingsBefore = updated.body.settings as Record<string, unknown>;
    // A second instance that is deleted before the restart must stay deleted.
    const goneToken = await first.createInstance(accountToken, { name: 'gone' });
    expectOk(await first.api.delete('/api/instance/delete/gone', { token: accountToken }));
    await first.stop({ keepData: true });
    node = await startTestNode({}, dataDir);
    expectError(await getSettings(node, 'gone', goneToken), 401, 'Invalid token');
  });

  after(async () => {
    await node?.stop();
  });

  it('keeps the account token', async () => {
    expect(await listNames(node!, accountToken)).to.deep.equal(['keeper']);
  });

  it('keeps the instance token', async () => {
    const res = await getSettings(node!, 'keeper', instanceToken);
    expectOk(res);
    expect(await listNames(node!, instanceToken)).to.deep.equal(['keeper']);
  });

  it('keeps the settings', async () => {
    const res = await getSettings(node!, 'keeper', accountToken);
    expectOk(res);
    expect(res.body.settings).to.deep.equal(settingsBefore);
    expect(res.body.settings).to.include({
      ignoreGroupMessages: true,
      autoRejectCalls: true,
      callRejectMessage: 'call me later',
      keepOnlineStatus: true,
      disableHistorySync: true,
    });
  });

  it('keeps the proxy and webhook blocks without revealing their secrets', async () => {
    const res = await node!.api.get('/api/instance/list', { token: accountToken });
    expectOk(res);
    const [keeper] = res.body.instances;
    expect(keeper.proxy).to.include({
      enabled: true,
      host: 'proxy.example.com',
      port: '1080',
      protocol: 'socks5',
      user: 'keeper-user',
      hasPassword: true,
    });
    expect(keeper.webhook).to.include({
      enabled: true,
      url: 'https://hooks.example.com/keeper',
      hasAuthorization: true,
    });
    expect(keeper.webhook.events).to.deep.equal(['message.exchange', 'instance.state']);
    expect(res.text).to.not.include(PROXY_PASSWORD);
    expect(res.text).to.not.include(WEBHOOK_AUTH);
  });

  it('still enforces ownership and accepts writes after the restart', async () => {
    expectOk(await postSettings(node!, 'keeper', instanceToken, { ignoreStatus: true }));
    expect((await getSettings(node!, 'keeper', accountToken)).body.settings.ignoreStatus).to.equal(true);
    expectError(await getSettings(node!, 'gone', accountToken), 404, 'Instance not found');
  });
});
