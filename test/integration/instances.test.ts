import { expect } from 'chai';
import { startTestNode } from '../helpers/test-node.js';
import type { RequestOptions, TestNode } from '../helpers/test-node.js';
import {
  NO_RATE_LIMITS,
  SETTINGS_FIELDS,
  createInstanceRaw,
  expectError,
  expectOk,
  getSettings,
  listNames,
  postSettings,
  rawOptions,
} from './support.js';

const BAD_NAME =
  'Invalid instance name: use 1 to 64 letters, digits, dots, dashes or underscores, starting with a letter or digit';

const NOT_JSON = 'Invalid request body: Content-Type must be application/json';

const SECRETS = {
  proxyPassword: 'proxy-pass-S3CRET-7781',
  webhookAuthorization: 'Bearer hook-S3CRET-4412',
  helpdeskApiToken: 'helpdesk-S3CRET-9034',
  s3SecretKey: 's3-S3CRET-key-6620',
};

/**
 * A body that fills every block, each valid. The helpdesk block is saved disabled: enabled, it would be
 * activated against its Chatwoot, which this suite does not run (helpdesk-api.test.ts activates creation
 * blocks against a fake Chatwoot), and no test may reach the network.
 */
const FULL_BODY = {
  ...{
    proxyEnabled: true,
    proxyHost: 'proxy.example.com',
    proxyPort: '3128',
    proxyProtocol: 'http',
    proxyUser: 'proxy-user',
  },
  proxyPassword: SECRETS.proxyPassword,
  ...{ webhookEnabled: true, webhookURL: 'https://hooks.example.com/in', webhookEvents: ['message.exchange'] },
  webhookAuthorization: SECRETS.webhookAuthorization,
  ...{ websocketEnabled: true, websocketEvents: [] },
  ...{
    helpdeskEnabled: false,
    helpdeskBaseUrl: 'https://helpdesk.example.com',
    helpdeskAccountId: 7,
    helpdeskInboxName: 'Support',
  },
  helpdeskApiToken: SECRETS.helpdeskApiToken,
  ...{ chatbotEnabled: true, chatbotUrl: 'https://bot.example.com/flow', chatbotTriggerType: 'all' },
  ...{ s3Enabled: true, s3Region: 'eu-west-1', s3Bucket: 'media-bucket', s3AccessKey: 'AKIAEXAMPLE' },
  s3SecretKey: SECRETS.s3SecretKey,
};

describe('instances: creation, list, delete, settings (spec section 4.1)', () => {
  let node: TestNode;
  let owner: string;
  let other: string;
  let seq = 0;
  const fresh = (prefix: string) => `${prefix}-${++seq}`;

  before(async () => {
    node = await startTestNode(NO_RATE_LIMITS);
    owner = await node.createAccount('owner');
    other = await node.createAccount('other');
  });

  after(async () => {
    await node.stop();
  });

  const create = (body: unknown, token = owner, extra?: RequestOptions) => createInstanceRaw(node, token, body, extra);

  describe('POST /api/instance/new', () => {
    it('creates a disconnected instance with a token, all 7 settings and every block summary', async () => {
      const name = fresh('full');
      const res = await create({ name, ...FULL_BODY });
      expectOk(res, 201);
      expect(res.body.instance.name).to.equal(name);
      // The hosted product's clients read the id from the creation answer.
      expect(res.body.instance.id).to.match(/^[0-9a-f-]{36}$/);
      expect(res.body.instance.token).to.be.a('string').with.length.greaterThan(16);
      expect(res.body.settings).to.have.all.keys(...SETTINGS_FIELDS);
      expect(res.body.settings.disableHistorySync).to.equal(true);
      for (const block of ['proxy', 'webhook', 'websocket', 'helpdesk', 'chatbot', 'settings', 's3']) {
        expect(res.body, block).to.have.property(block).that.is.an('object');
      }
      for (const block of ['proxy', 'webhook', 'websocket', 'chatbot', 's3']) {
        expect(res.body[block].enabled, block).to.equal(true);
        expect(res.body[block], block).to.not.have.property('error');
      }
      expect(res.body.helpdesk).to.include({
        enabled: false,
        baseUrl: 'https://helpdesk.example.com',
        accountId: 7,
        inboxName: 'Support',
      });
      expect(res.body.helpdesk).to.not.have.property('error');
      expectOk(await getSettings(node, name, res.body.instance.token));
    });

    it('never returns a secret, and masks s3.secretKey', async () => {
      const name = fresh('secret');
      const res = await create({ name, ...FULL_BODY });
      expectOk(res, 201);
      const list = await node.api.get(`/api/instance/list?instanceName=${name}`, { token: owner });
      for (const [field, secret] of Object.entries(SECRETS)) {
        expect(res.text, field).to.not.include(secret);
        expect(list.text, field).to.not.include(secret);
      }
      expect(res.body.s3.secretKey).to.be.a('string').and.not.equal('');
      expect(res.body.helpdesk).to.not.have.property('apiToken');
    });

    it('defaults every block to disabled when the body has only a name', async () => {
      const res = await create({ name: fresh('bare') });
      expectOk(res, 201);
      expect(res.body.instance.connection.state).to.equal('disconnected');
      for (const block of ['proxy', 'webhook', 'websocket', 'helpdesk', 'chatbot', 's3']) {
        expect(res.body[block].enabled, block).to.equal(false);
      }
    });

    it('honours a custom token as the TokenInstance', async () => {
      const name = fresh('custom');
      const token = `custom-token-${name}-0001`;
      const res = await create({ name, token });
      expectOk(res, 201);
      expect(res.body.instance.token).to.equal(token);
      expectOk(await getSettings(node, name, token));
    });

    it('refuses a duplicate name in the same account with 409 and keeps the first instance', async () => {
      const name = fresh('dup');
      const first = await node.createInstance(owner, { name });
      expectError(await create({ name }), 409, 'Instance name already exists');
      expect(await listNames(node, owner, `?instanceName=${name}`)).to.deep.equal([name]);
      expectOk(await getSettings(node, name, first));
    });

    it('allows the same name in another account', async () => {
      const name = fresh('shared');
      await node.createInstance(owner, { name });
      expectOk(await create({ name }, other), 201);
      expect(await listNames(node, other, `?instanceName=${name}`)).to.deep.equal([name]);
    });

    it('applies flat settings', async () => {
      const res = await create({
        name: fresh('flat'),
        disableHistorySync: false,
        ignoreGroupMessages: true,
        ignoreStatus: true,
      });
      expectOk(res, 201);
      expect(res.body.settings).to.include({
        disableHistorySync: false,
        ignoreGroupMessages: true,
        ignoreStatus: true,
        autoReadMessages: false,
      });
    });

    it('applies nested settings', async () => {
      const name = fresh('nested');
      const res = await create({
        name,
        settings: { disableHistorySync: false, autoRejectCalls: true, callRejectMessage: 'busy' },
      });
      expectOk(res, 201);
      expect(res.body.settings).to.include({
        disableHistorySync: false,
        autoRejectCalls: true,
        callRejectMessage: 'busy',
      });
      const read = await getSettings(node, name, owner);
      expect(read.body.settings).to.deep.equal(res.body.settings);
    });

    it('refuses the same setting flat and nested with 400 naming the field', async () => {
      const name = fresh('both');
      const res = await create({ name, ignoreStatus: true, settings: { ignoreStatus: false } });
      expectError(
        res,
        400,
        "Invalid request body: 'ignoreStatus' is given both at the top level and in 'settings'; send only one",
      );
      expect(await listNames(node, owner, `?instanceName=${name}`)).to.deep.equal([]);
    });

    it('accepts the alias spellings', async () => {
      const res = await create({
        name: fresh('alias'),
        ...{ proxyEnabled: true, proxyHost: 'proxy.example.com', proxyPort: '8080', proxyUsername: 'alias-user' },
        ...{ webhookEnabled: true, webhookURL: 'https://hooks.example.com/alias', webhookMediaBase64: true },
        ...{ websocketEnabled: true, websocketMediaBase64: true },
        ...{ chatwootEnabled: false, chatwootBaseUrl: 'https://helpdesk.example.com', chatwootAccountId: 3 },
        ...{ chatwootApiToken: 'alias-helpdesk-token', chatwootInboxName: 'Alias inbox' },
        ...{ typebotEnabled: true, typebotUrl: 'https://bot.example.com/alias', typebotTriggerType: 'keyword' },
        ...{ typebotTriggerOperator: 'equals', typebotTriggerValue: 'hi' },
      });
      expectOk(res, 201);
      expect(res.body.proxy).to.include({ enabled: true, user: 'alias-user' });
      expect(res.body.webhook).to.include({ enabled: true, base64: true });
      expect(res.body.websocket).to.include({ enabled: true, base64: true });
      expect(res.body.helpdesk).to.include({
        enabled: false,
        baseUrl: 'https://helpdesk.example.com',
        accountId: 3,
        inboxName: 'Alias inbox',
      });
      expect(res.body.chatbot).to.include({
        enabled: true,
        triggerType: 'keyword',
        triggerOperator: 'equals',
        triggerValue: 'hi',
      });
    });

    const clashes: [string, Record<string, unknown>][] = [
      ['proxyUsername', { proxyUsername: 'a', proxyUser: 'b' }],
      ['webhookMediaBase64', { webhookMediaBase64: true, webhookBase64: false }],
      ['websocketMediaBase64', { websocketMediaBase64: true, websocketBase64: true }],
      ['chatwootEnabled', { chatwootEnabled: true, helpdeskEnabled: true }],
      ['typebotEnabled', { typebotEnabled: false, chatbotEnabled: false }],
    ];
    for (const [alias, fields] of clashes) {
      it(`refuses ${alias} together with its canonical spelling, naming both`, async () => {
        const canonical = Object.keys(fields).find((k) => k !== alias)!;
        const name = fresh('clash');
        const res = await create({ name, ...fields });
        expectError(res, 400, `Invalid request body: '${alias}' and '${canonical}' are the same field; send only one`);
        expect(await listNames(node, owner, `?instanceName=${name}`)).to.deep.equal([]);
      });
    }
  });

  describe('log-and-continue blocks', () => {
    async function createWithBadBlock(fields: Record<string, unknown>) {
      const name = fresh('lac');
      const res = await create({ name, ...fields });
      expectOk(res, 201);
      expect(await listNames(node, owner, `?instanceName=${name}`)).to.deep.equal([name]);
      return res.body as Record<string, Record<string, unknown>>;
    }

    it('a proxy enabled without a host is skipped', async () => {
      const body = await createWithBadBlock({ proxyEnabled: true, proxyPort: '3128' });
      expect(body.proxy).to.deep.equal({ enabled: false, error: 'proxyHost is required when the proxy is enabled' });
    });

    for (const host of ['127.0.0.1', 'localhost', '10.1.2.3', '::ffff:7f00:1', '2002:7f00:1::', 'proxy.internal']) {
      it(`a proxy on an internal network (${host}) is skipped, and refused by POST /api/instance/proxy`, async () => {
        const refusal = 'proxyHost: proxies on internal networks are not allowed';
        const body = await createWithBadBlock({ proxyEnabled: true, proxyHost: host, proxyPort: '3128' });
        expect(body.proxy).to.deep.equal({ enabled: false, error: refusal });
        const name = (body.instance as { name: string }).name;
        const res = await node.api.post(
          `/api/instance/proxy/${name}`,
          { enabled: true, host, port: '3128' },
          { token: owner },
        );
        expectError(res, 400, refusal);
        expect((await node.api.get(`/api/instance/getProxy/${name}`, { token: owner })).body.proxy).to.deep.equal({
          enabled: false,
        });
      });
    }

    for (const url of ['http://10.0.0.1/hook', 'http://localhost:8080/hook']) {
      it(`a webhook pointing at ${url} is skipped`, async () => {
        const body = await createWithBadBlock({ webhookEnabled: true, webhookURL: url, websocketEnabled: true });
        expect(body.webhook).to.deep.equal({
          enabled: false,
          error: 'webhookURL: URLs pointing to internal networks are not allowed',
        });
        expect(body.websocket?.enabled).to.equal(true);
      });
    }

    it('a chatbot keyword trigger with a catastrophic regex reports status error', async () => {
      const body = await createWithBadBlock({
        chatbotEnabled: true,
        chatbotUrl: 'https://bot.example.com/flow',
        chatbotTriggerType: 'keyword',
        chatbotTriggerOperator: 'regex',
        chatbotTriggerValue: '(a+)+',
      });
      expect(body.chatbot).to.deep.equal({
        enabled: false,
        status: 'error',
        error: 'chatbotTriggerValue: nested quantifiers are not allowed in regex triggers',
      });
    });

    it('a helpdesk enabled without an API token reports status error', async () => {
      const body = await createWithBadBlock({
        helpdeskEnabled: true,
        helpdeskBaseUrl: 'https://helpdesk.example.com',
        helpdeskAccountId: 4,
      });
      expect(body.helpdesk).to.deep.equal({
        enabled: false,
        status: 'error',
        error: 'helpdeskApiToken is required when the helpdesk is enabled',
      });
    });
  });

  describe('shape errors change nothing', () => {
    const INVALID_NAMES: [string, string][] = [
      ['a name with spaces', 'my instance'],
      ['a name with a control character', 'bad\u0007name'],
      ['a name with a NUL character', 'bad\u0000name'],
      // Leading/trailing control characters must be refused too, not silently trimmed away.
      ['a name with a trailing tab', 'trailing-tab\t'],
      ['a name with a leading newline', '\nleading-newline'],
      ['a path-like name', '../x'],
      ['a name with a slash', 'a/b'],
      ['a 65-character name', 'n'.repeat(65)],
    ];
    const cases: { label: string; body?: unknown; raw?: string; contentType?: string; message: string }[] = [
      { label: 'malformed JSON', raw: '{"name": "broken",', message: 'Invalid request body: malformed JSON' },
      {
        label: 'a JSON array body',
        body: [{ name: 'in-array' }],
        message: 'Invalid request body: expected a JSON object',
      },
      { label: 'a JSON string body', raw: '"just-a-string"', message: 'Invalid request body: malformed JSON' },
      {
        label: 'proxyEnabled: "yes"',
        body: { name: 'typed-1', proxyEnabled: 'yes' },
        message: "Invalid request body: field 'proxyEnabled': expected boolean, received string",
      },
      {
        label: 'name: 5',
        body: { name: 5 },
        message: "Invalid request body: field 'name': expected string, received number",
      },
      {
        label: 'settings that is not an object',
        body: { name: 'set-1', settings: [true] },
        message: "Invalid request body: field 'settings': expected object",
      },
      {
        label: 'a form-encoded body',
        raw: 'name=form-1',
        contentType: 'application/x-www-form-urlencoded',
        message: NOT_JSON,
      },
      { label: 'a text/plain body', raw: '{"name":"plain-1"}', contentType: 'text/plain', message: NOT_JSON },
      ...INVALID_NAMES.map(([label, name]) => ({ label, body: { name }, message: BAD_NAME })),
    ];

    for (const { label, body, raw, contentType, message } of cases) {
      it(`refuses ${label} with 400`, async () => {
        const before = await listNames(node, owner);
        expectError(await create(body, owner, rawOptions(raw, contentType)), 400, message);
        expect(await listNames(node, owner)).to.deep.equal(before);
      });
    }

    for (const [i, contentType] of [
      'application/json; charset=utf-8',
      'APPLICATION/JSON;charset="UTF-8"',
      'application/vnd.switchboard+json',
    ].entries()) {
      it(`accepts a JSON body sent as ${contentType}`, async () => {
        const name = `json-type-${i}`;
        expectOk(await create(undefined, owner, rawOptions(JSON.stringify({ name }), contentType)), 201);
        expect(await listNames(node, owner)).to.include(name);
      });
    }

    for (const [label, body] of [
      ['a missing name', {}],
      ['a blank name', { name: '   ' }],
      ['a null name', { name: null }],
      ['an empty name', { name: '' }],
    ] as const) {
      it(`refuses ${label} with 400 Instance name is required`, async () => {
        const before = await listNames(node, owner);
        expectError(await create(body), 400, 'Instance name is required');
        expect(await listNames(node, owner)).to.deep.equal(before);
      });
    }

    it('refuses a body over MAX_BODY_BYTES with 413 and creates nothing', async () => {
      const small = await startTestNode({ ...NO_RATE_LIMITS, MAX_BODY_BYTES: '2048' });
      try {
        const token = await small.createAccount('small');
        const res = await createInstanceRaw(small, token, { name: 'too-big', chatbotLabel: 'x'.repeat(4096) });
        expectError(res, 413, 'Request body too large');
        expect(await listNames(small, token)).to.deep.equal([]);
        expectOk(await createInstanceRaw(small, token, { name: 'fits' }), 201);
      } finally {
        await small.stop();
      }
    });
  });

  describe('quota', () => {
    it('refuses creation over the account quota with 403', async () => {
      const token = await node.createAccount('quota-one', { instanceQuota: 1 });
      await node.createInstance(token, { name: 'only-one' });
      expectError(await create({ name: 'second-one' }, token), 403, 'Account instance quota exceeded');
      expect(await listNames(node, token)).to.deep.equal(['only-one']);
    });

    it('lets exactly quota creations through when they race', async () => {
      const token = await node.createAccount('quota-two', { instanceQuota: 2 });
      const results = await Promise.all([1, 2, 3, 4, 5].map((i) => create({ name: `race-${i}` }, token)));
      const statuses = results.map((r) => r.status);
      expect(
        statuses.filter((s) => s === 201),
        JSON.stringify(statuses),
      ).to.have.length(2);
      for (const res of results.filter((r) => r.status !== 201)) {
        expectError(res, 403, 'Account instance quota exceeded');
      }
      expect(await listNames(node, token)).to.have.length(2);
    });
  });

  describe('GET /api/instance/list', () => {
    let token: string;
    before(async () => {
      token = await node.createAccount('lister');
    });

    it('says 0 Instances found, 1 Instance found, then N Instances found', async () => {
      const message = async (query = '') =>
        (await node.api.get(`/api/instance/list${query}`, { token })).body.message as string;
      expect(await message()).to.equal('0 Instances found');
      await node.createInstance(token, { name: 'list-a' });
      expect(await message()).to.equal('1 Instance found');
      await node.createInstance(token, { name: 'list-b' });
      await node.createInstance(token, { name: 'list-c' });
      expect(await message()).to.equal('3 Instances found');
      expectError(await node.api.get('/api/instance/list?instanceName=nope', { token }), 404, 'Instance not found');
      expect(await message('?instanceName=nope,list-a')).to.equal('1 Instance found');
    });

    it('filters by several names with instanceName=a,b', async () => {
      const names = await listNames(node, token, '?instanceName=list-a,list-c');
      expect([...names].sort()).to.deep.equal(['list-a', 'list-c']);
      expect(await listNames(node, token, '?instanceName=list-b')).to.deep.equal(['list-b']);
    });

    it('shows every instance disconnected, with its settings', async () => {
      const res = await node.api.get('/api/instance/list', { token });
      expectOk(res);
      expect(res.body.instances).to.have.length(3);
      for (const item of res.body.instances) {
        expect(item.connection.state).to.equal('disconnected');
        expect(item.settings).to.have.all.keys(...SETTINGS_FIELDS);
      }
    });
  });

  describe('DELETE /api/instance/delete/:instance', () => {
    it('deletes the instance; afterwards the name is 404 and its token 401', async () => {
      const name = fresh('del');
      const instanceToken = await node.createInstance(owner, { name });
      const res = await node.api.delete(`/api/instance/delete/${name}`, { token: owner });
      expectOk(res);
      expect(res.body.instance).to.include({ name, status: 'deleted' });
      expectError(await getSettings(node, name, owner), 404, 'Instance not found');
      expectError(await node.api.delete(`/api/instance/delete/${name}`, { token: owner }), 404, 'Instance not found');
      expectError(await getSettings(node, name, instanceToken), 401, 'Invalid token');
      expect(await listNames(node, owner, `?instanceName=${name}`)).to.deep.equal([]);
    });

    it('frees the name for a new instance', async () => {
      const name = fresh('reuse');
      await node.createInstance(owner, { name });
      expectOk(await node.api.delete(`/api/instance/delete/${name}`, { token: owner }));
      expectOk(await create({ name }), 201);
    });

    it("refuses another account's instance with 403 and keeps it", async () => {
      const name = fresh('foreign');
      const instanceToken = await node.createInstance(other, { name });
      expectError(
        await node.api.delete(`/api/instance/delete/${name}`, { token: owner }),
        403,
        'Instance does not belong to your account',
      );
      expectOk(await getSettings(node, name, instanceToken));
    });
  });

  describe('POST /api/instance/settings/:instance', () => {
    let name: string;
    before(async () => {
      name = fresh('settings');
      await node.createInstance(owner, { name, settings: { callRejectMessage: 'later', ignoreStatus: true } });
    });

    it('updates only the sent fields and returns all 7', async () => {
      const res = await postSettings(node, name, owner, { autoReadMessages: true, keepOnlineStatus: true });
      expectOk(res);
      expect(res.body.settings).to.have.all.keys(...SETTINGS_FIELDS);
      expect(res.body.settings).to.deep.equal({
        ...{ autoRejectCalls: false, callRejectMessage: 'later', ignoreGroupMessages: false, keepOnlineStatus: true },
        ...{ autoReadMessages: true, disableHistorySync: true, ignoreStatus: true },
      });
      const again = await postSettings(node, name, owner, { ignoreStatus: false });
      expect(again.body.settings).to.include({
        autoReadMessages: true,
        keepOnlineStatus: true,
        ignoreStatus: false,
        callRejectMessage: 'later',
      });
      expect((await getSettings(node, name, owner)).body.settings).to.deep.equal(again.body.settings);
    });

    it('refuses {} with 400 At least one setting must be provided', async () => {
      expectError(await postSettings(node, name, owner, {}), 400, 'At least one setting must be provided');
    });

    const invalid: { label: string; body?: unknown; raw?: string; contentType?: string }[] = [
      { label: 'a wrong type', body: { autoReadMessages: 'yes' } },
      { label: 'a wrong type for callRejectMessage', body: { callRejectMessage: 5 } },
      { label: 'a null value', body: { autoReadMessages: null } },
      { label: 'a JSON array', body: [{ autoReadMessages: true }] },
      { label: 'malformed JSON', raw: '{"autoReadMessages": tru' },
      {
        label: 'a non-JSON content type',
        raw: 'autoReadMessages=true',
        contentType: 'application/x-www-form-urlencoded',
      },
    ];
    for (const { label, body, raw, contentType } of invalid) {
      it(`refuses ${label} with 400 Invalid request body and changes nothing`, async () => {
        const before = (await getSettings(node, name, owner)).body.settings;
        expectError(
          await postSettings(node, name, owner, body, rawOptions(raw, contentType)),
          400,
          'Invalid request body',
        );
        expect((await getSettings(node, name, owner)).body.settings).to.deep.equal(before);
      });
    }

    it('gives 404 Instance not found for an unknown instance', async () => {
      expectError(
        await postSettings(node, 'no-such-settings', owner, { autoReadMessages: true }),
        404,
        'Instance not found',
      );
    });
  });
});
