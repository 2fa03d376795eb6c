import { expect } from 'chai';
import { hashToken } from '../../src/security/tokens.js';
import { FakeChatwoot } from '../helpers/fake-chatwoot.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { startHelpdeskRig } from './helpdesk-support.js';
import type { HelpdeskRig } from './helpdesk-support.js';
import { NO_RATE_LIMITS, expectError, expectOk } from './support.js';

const DISABLED = 'integration gateway not configured';

describe('helpdesk integration: set, list, delete (spec 4.7)', () => {
  let rig: HelpdeskRig;
  let seq = 0;
  const fresh = (p: string) => `${p}-${++seq}`;

  before(async () => {
    rig = await startHelpdeskRig();
  });

  after(async () => {
    await rig.stop();
  });

  const api = () => rig.net.node.api;
  const settings = (extra: Record<string, unknown> = {}) => ({
    baseUrl: rig.fake.url,
    accountId: rig.fake.accountId,
    apiToken: rig.fake.token,
    ...extra,
  });

  it('set creates an API inbox whose webhook URL carries a per-instance secret, and list shows it with the token', async () => {
    const name = fresh('set');
    const token = await rig.net.idle(name);
    const res = await rig.set(
      name,
      token,
      settings({ inboxName: 'Sales WA', signMessages: true, startAsPending: true }),
    );
    expectOk(res);
    expect(res.body.message).to.equal('Helpdesk integration activated');
    const inbox = rig.fake.inboxes.find((i) => i.name === 'Sales WA')!;
    expect(inbox.channel_type).to.equal('Channel::Api');
    expect(res.body.helpdesk).to.deep.equal({
      enabled: true,
      status: 'active',
      last_error: null,
      baseUrl: rig.fake.url,
      accountId: rig.fake.accountId,
      inboxName: 'Sales WA',
      inboxId: inbox.id,
      signMessages: true,
      ignoreGroups: false,
      startAsPending: true,
      reopenResolved: false,
    });
    expect(res.text).to.not.include(rig.fake.token);

    const instance = await rig.net.node.store.instances.findByTokenHash(hashToken(token));
    expect(inbox.webhook_url).to.match(
      new RegExp(`^${rig.net.node.url}/api/helpdesk/webhook/${instance!.id}/[A-Za-z0-9_-]{43}$`),
    );
    const list = await rig.list(name, token);
    expect(list).to.include({
      status: 'active',
      apiToken: rig.fake.token,
      webhookUrl: inbox.webhook_url,
      inboxId: inbox.id,
    });
    // At rest the token is sealed, never in clear.
    expect(JSON.stringify(instance!.config.helpdesk)).to.not.include(rig.fake.token);
  });

  it('a second set reuses the inbox by name, keeps what it does not send, and repoints its webhook', async () => {
    const name = fresh('reuse');
    const token = await rig.net.idle(name);
    expectOk(await rig.set(name, token, settings({ inboxName: 'Shared inbox' })));
    const inbox = rig.fake.inboxes.find((i) => i.name === 'Shared inbox')!;
    const before = inbox.webhook_url;
    inbox.webhook_url = 'https://elsewhere.example.com/hook';
    const res = await rig.set(name, token, { reopenResolved: true });
    expectOk(res);
    expect(rig.fake.inboxes.filter((i) => i.name === 'Shared inbox')).to.have.length(1);
    expect(inbox.webhook_url).to.equal(before);
    expect(res.body.helpdesk).to.include({
      inboxId: inbox.id,
      reopenResolved: true,
      inboxName: 'Shared inbox',
      status: 'active',
    });
    expect((await rig.list(name, token)).apiToken).to.equal(rig.fake.token);
  });

  it('accepts the creation body spellings (helpdesk…, chatwoot…) and refuses two spellings of one field', async () => {
    const name = fresh('spell');
    const token = await rig.net.idle(name);
    expectOk(
      await rig.set(name, token, {
        chatwootBaseUrl: rig.fake.url,
        chatwootAccountId: String(rig.fake.accountId),
        helpdeskApiToken: rig.fake.token,
        chatwootInboxName: 'Spelled',
        chatwootIgnoreGroups: true,
      }),
    );
    expect(await rig.list(name, token)).to.include({
      inboxName: 'Spelled',
      ignoreGroups: true,
      accountId: rig.fake.accountId,
    });
    expectError(
      await rig.set(name, token, { baseUrl: rig.fake.url, helpdeskBaseUrl: rig.fake.url }),
      400,
      "Invalid request body: 'baseUrl' and 'helpdeskBaseUrl' are the same field; send only one",
    );
  });

  it('refuses incomplete or wrong settings with 400 and saves nothing', async () => {
    const name = fresh('bad');
    const token = await rig.net.idle(name);
    expectError(
      await rig.set(name, token, { baseUrl: rig.fake.url, accountId: rig.fake.accountId }),
      400,
      'Invalid request body: apiToken is required',
    );
    expectError(
      await rig.set(name, token, settings({ accountId: 0 })),
      400,
      "Invalid request body: field 'accountId': Too small: expected number to be >0",
    );
    expectError(
      await rig.set(name, token, settings({ paused: true, enabled: true })),
      400,
      "Invalid request body: send only one of 'enabled' and 'paused'",
    );
    const refused = await rig.set(name, token, settings({ apiToken: 'wrong-token' }));
    expectError(refused, 400, 'Helpdesk settings refused: Chatwoot GET /inboxes: HTTP 401 Invalid Access Token');
    const wrongAccount = await rig.set(name, token, settings({ accountId: 999 }));
    expect(wrongAccount.status, wrongAccount.text).to.equal(400);
    expectError(await api().get(`/api/helpdesk/list/${name}`, { token }), 404, 'Helpdesk integration not found');
  });

  it('saves settings while Chatwoot is unreachable, with status error, and activates on the next set', async () => {
    const name = fresh('down');
    const token = await rig.net.idle(name);
    rig.fake.fail({ status: 503 });
    try {
      const res = await rig.set(name, token, settings({ inboxName: 'Down inbox' }));
      expectOk(res);
      expect(res.body.message).to.equal(
        'Helpdesk integration saved, but Chatwoot could not be reached: Chatwoot GET /inboxes: HTTP 503 Internal Server Error',
      );
      expect(res.body.helpdesk).to.include({
        status: 'error',
        inboxId: null,
        last_error: 'Chatwoot GET /inboxes: HTTP 503 Internal Server Error',
      });
    } finally {
      rig.fake.recover();
    }
    const again = await rig.set(name, token, {});
    expectOk(again);
    expect(again.body.helpdesk).to.include({
      status: 'active',
      last_error: null,
      inboxId: rig.fake.inboxes.find((i) => i.name === 'Down inbox')!.id,
    });
  });

  it('a private base URL is refused without ALLOW_PRIVATE_URLS', async () => {
    const node = await startTestNode(NO_RATE_LIMITS);
    try {
      const account = await node.createAccount('private');
      const token = await node.createInstance(account, { name: 'p1' });
      expectError(
        await node.api.post(
          '/api/helpdesk/set/p1',
          { baseUrl: 'http://10.1.2.3', accountId: 1, apiToken: 't' },
          { token },
        ),
        400,
        'Invalid request body: baseUrl: URLs pointing to internal networks are not allowed',
      );
    } finally {
      await node.stop();
    }
  });

  it('delete removes the integration but keeps the inbox; list and delete then answer 404', async () => {
    const name = fresh('del');
    const token = await rig.net.idle(name);
    expectOk(await rig.set(name, token, settings({ inboxName: 'Kept inbox' })));
    const inbox = rig.fake.inboxes.find((i) => i.name === 'Kept inbox')!;
    const res = await api().delete(`/api/helpdesk/delete/${name}`, { token });
    expectOk(res);
    expect(res.body.helpdesk).to.deep.equal({ inboxId: inbox.id });
    expect(rig.fake.inboxes).to.include(inbox);
    expectError(await api().get(`/api/helpdesk/list/${name}`, { token }), 404, 'Helpdesk integration not found');
    expectError(await api().delete(`/api/helpdesk/delete/${name}`, { token }), 404, 'Helpdesk integration not found');
  });

  it('answers 404 for an unknown instance and 401 without a token', async () => {
    const token = await rig.net.idle(fresh('auth'));
    expectError(
      await api().get('/api/helpdesk/list/nobody-here', { token: rig.net.account }),
      404,
      'Instance not found',
    );
    expectError(
      await api().get('/api/helpdesk/list/nobody-here'),
      401,
      'Missing token in header, Authorization header, or query parameter',
    );
    expect((await api().get('/api/helpdesk/list/nobody-here', { token })).status).to.equal(401);
  });

  it('serves the same endpoints under /api/chatwoot', async () => {
    const name = fresh('alias');
    const token = await rig.net.idle(name);
    const set = await rig.set(name, token, settings({ inboxName: 'Alias inbox' }), '/api/chatwoot');
    // The hosted product's answer: 201, flat fields.
    expectOk(set, 201);
    expect(set.body).to.deep.include({ instance: name, status: 'active', message: 'chatwoot integration activated' });
    expect(set.body.bridge_integration_id).to.be.a('string');
    const list = await api().get(`/api/chatwoot/list/${name}`, { token });
    expectOk(list);
    expect(list.body.helpdesk).to.include({ inboxName: 'Alias inbox', apiToken: rig.fake.token, status: 'active' });
    expect(list.body).to.deep.include({
      instance_name: name,
      status: 'active',
      chatwoot_api_token: rig.fake.token,
      chatwoot_inbox_name: 'Alias inbox',
      last_error: null,
      sign_messages: list.body.helpdesk.signMessages,
    });
    expect(list.body).to.include.keys(
      'bridge_integration_id',
      'chatwoot_base_url',
      'chatwoot_account_id',
      'chatwoot_inbox_id',
      'created_at',
      'ignore_groups',
      'start_as_pending',
      'reopen_resolved',
    );
    const removed = await api().delete(`/api/chatwoot/delete/${name}`, { token });
    expectOk(removed);
    expect(removed.body.message).to.equal('chatwoot integration deactivated');
    expectError(await api().get(`/api/chatwoot/list/${name}`, { token }), 404, 'Helpdesk integration not found');
    expectError(
      await api().delete(`/api/chatwoot/delete/${name}`, { token }),
      404,
      'no chatwoot integration to delete',
    );
  });

  it('refuses a webhook whose secret or instance is wrong with a plain 404', async () => {
    const name = fresh('secret');
    const token = await rig.net.idle(name);
    expectOk(await rig.set(name, token, settings({ inboxName: 'Secret inbox' })));
    const url = rig.fake.inboxes.find((i) => i.name === 'Secret inbox')!.webhook_url!;
    const path = new URL(url).pathname;
    const body = { event: 'message_created' };
    expectOk(await api().post(path, body));
    expectError(await api().post(`${path.slice(0, -1)}x`, body), 404, 'Not found');
    expectError(
      await api().post(path.replace(/\/webhook\/[^/]+\//, '/webhook/00000000-0000-0000-0000-000000000000/'), body),
      404,
      'Not found',
    );
  });

  describe('creation blocks', () => {
    it('activates a helpdesk block: the inbox is created and the block reports active', async () => {
      const name = fresh('block');
      const res = await api().post(
        '/api/instance/new',
        {
          name,
          helpdeskEnabled: true,
          helpdeskBaseUrl: rig.fake.url,
          helpdeskAccountId: rig.fake.accountId,
          helpdeskApiToken: rig.fake.token,
          helpdeskInboxName: 'Block inbox',
          helpdeskSignMessages: true,
        },
        { token: rig.net.account },
      );
      expectOk(res, 201);
      const inbox = rig.fake.inboxes.find((i) => i.name === 'Block inbox')!;
      expect(res.body.helpdesk).to.include({ enabled: true, status: 'active', inboxId: inbox.id, signMessages: true });
      expect(res.body.helpdesk).to.not.have.property('error');
      expect(res.text).to.not.include(rig.fake.token);
      expect(await rig.list(name, res.body.instance.token)).to.include({
        status: 'active',
        inboxId: inbox.id,
        apiToken: rig.fake.token,
      });
    });

    it('with the chatwoot… spellings too', async () => {
      const name = fresh('cwblock');
      const res = await api().post(
        '/api/instance/new',
        {
          name,
          chatwootEnabled: true,
          chatwootBaseUrl: rig.fake.url,
          chatwootAccountId: rig.fake.accountId,
          chatwootApiToken: rig.fake.token,
          chatwootInboxName: 'CW block',
        },
        { token: rig.net.account },
      );
      expectOk(res, 201);
      expect(res.body.helpdesk).to.include({ status: 'active', inboxName: 'CW block' });
    });

    it('a block Chatwoot refuses still creates the instance, with status error; set fixes it', async () => {
      const name = fresh('badblock');
      const res = await api().post(
        '/api/instance/new',
        {
          name,
          helpdeskEnabled: true,
          helpdeskBaseUrl: rig.fake.url,
          helpdeskAccountId: rig.fake.accountId,
          helpdeskApiToken: 'not-the-token',
          helpdeskInboxName: 'Bad block',
        },
        { token: rig.net.account },
      );
      expectOk(res, 201);
      expect(res.body.helpdesk).to.include({
        enabled: true,
        status: 'error',
        error: 'Chatwoot GET /inboxes: HTTP 401 Invalid Access Token',
        inboxId: null,
      });
      const token = res.body.instance.token as string;
      expect(await rig.list(name, token)).to.include({
        status: 'error',
        last_error: 'Chatwoot GET /inboxes: HTTP 401 Invalid Access Token',
      });
      const fixed = await rig.set(name, token, { apiToken: rig.fake.token });
      expectOk(fixed);
      expect(fixed.body.helpdesk).to.include({ status: 'active', last_error: null, inboxName: 'Bad block' });
    });

    it('a block with helpdeskEnabled false is kept paused; set activates it', async () => {
      const name = fresh('offblock');
      const res = await api().post(
        '/api/instance/new',
        {
          name,
          helpdeskEnabled: false,
          helpdeskBaseUrl: rig.fake.url,
          helpdeskAccountId: rig.fake.accountId,
          helpdeskApiToken: rig.fake.token,
          helpdeskInboxName: 'Off block',
        },
        { token: rig.net.account },
      );
      expectOk(res, 201);
      expect(res.body.helpdesk).to.include({ enabled: false, status: 'paused', inboxId: null });
      expect(rig.fake.inboxes.some((i) => i.name === 'Off block')).to.equal(false);
      const set = await rig.set(name, res.body.instance.token, {});
      expectOk(set);
      expect(set.body.helpdesk).to.include({ enabled: true, status: 'active' });
    });
  });
});

describe('helpdesk module switch (HELPDESK_ENABLED=false)', () => {
  let node: TestNode;
  let account: string;
  let fake: FakeChatwoot;

  before(async () => {
    fake = await FakeChatwoot.start();
    node = await startTestNode({ ...NO_RATE_LIMITS, HELPDESK_ENABLED: 'false', ALLOW_PRIVATE_URLS: 'true' });
    account = await node.createAccount('switch');
  });

  after(async () => {
    await node.stop();
    await fake.stop();
  });

  it('answers 503 on set, list and delete, under both prefixes, even for an unknown instance', async () => {
    const token = await node.createInstance(account, { name: 'off' });
    for (const prefix of ['/api/helpdesk', '/api/chatwoot']) {
      expectError(
        await node.api.post(`${prefix}/set/off`, { baseUrl: fake.url, accountId: 1, apiToken: 't' }, { token }),
        503,
        DISABLED,
      );
      expectError(await node.api.get(`${prefix}/list/off`, { token }), 503, DISABLED);
      expectError(await node.api.delete(`${prefix}/delete/off`, { token }), 503, DISABLED);
      expectError(await node.api.get(`${prefix}/list/missing`, { token: account }), 503, DISABLED);
    }
    expect(fake.requests).to.deep.equal([]);
  });

  it('creation continues and the helpdesk block reports enabled: false', async () => {
    const res = await node.api.post(
      '/api/instance/new',
      {
        name: 'off-block',
        helpdeskEnabled: true,
        helpdeskBaseUrl: fake.url,
        helpdeskAccountId: fake.accountId,
        helpdeskApiToken: fake.token,
      },
      { token: account },
    );
    expectOk(res, 201);
    expect(res.body.helpdesk).to.deep.equal({ enabled: false });
    expect(fake.requests).to.deep.equal([]);
  });
});
