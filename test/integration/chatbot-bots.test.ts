import { expect } from 'chai';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { NO_RATE_LIMITS, expectError, expectOk } from './support.js';

const FLOW = 'https://viewer.example.com/support-flow';
const GATEWAY_OFF = 'integration gateway not configured';

const BOT_KEYS = [
  'botId',
  'enabled',
  'label',
  'url',
  'triggerType',
  'triggerOperator',
  'triggerValue',
  'expireMinutes',
  'expireMessage',
  'keywordFinish',
  'finishMessage',
  'typingDelayMs',
  'stopBotFromMe',
  'debounceSeconds',
  'ignoreGroups',
  'noStartFromMe',
  'keepOpen',
  'fallback',
  'createdAt',
  'updatedAt',
];

describe('chatbot bots: CRUD, uniqueness, the integration link, module switch (spec 4.8)', () => {
  let node: TestNode;
  let account: string;
  let seq = 0;

  before(async () => {
    node = await startTestNode(NO_RATE_LIMITS);
    account = await node.createAccount('bots');
  });

  after(async () => {
    await node.stop();
  });

  async function fresh(): Promise<{ name: string; token: string }> {
    const name = `bots-${++seq}`;
    return { name, token: await node.createInstance(account, { name }) };
  }
  const set = (name: string, body: unknown, token = account, prefix = 'chatbot') =>
    node.api.post(`/api/${prefix}/set/${name}`, body, { token });
  const patch = (name: string, body: unknown, query = '') =>
    node.api.request('PATCH', `/api/chatbot/update/${name}${query}`, body, { token: account });
  const list = (name: string, query = '') => node.api.get(`/api/chatbot/list/${name}${query}`, { token: account });
  const remove = (name: string, query = '') =>
    node.api.delete(`/api/chatbot/delete/${name}${query}`, { token: account });

  describe('create and read', () => {
    it('creates a bot with defaults, lists it with the enrichment and the integration link', async () => {
      const { name, token } = await fresh();
      const res = await set(name, { url: `${FLOW}?x=1#top`, triggerType: 'all', label: 'Support' }, token);
      expectOk(res, 201);
      expect(res.body.message).to.equal('Chatbot bot created');
      const bot = res.body.bot;
      expect(bot).to.have.all.keys(...BOT_KEYS);
      expect(bot).to.include({
        enabled: true,
        label: 'Support',
        url: FLOW,
        triggerType: 'all',
        triggerOperator: null,
        triggerValue: null,
        expireMinutes: 0,
        typingDelayMs: 0,
        stopBotFromMe: false,
        debounceSeconds: 0,
        ignoreGroups: true,
        noStartFromMe: false,
        keepOpen: false,
        fallback: false,
      });
      expect(bot.botId).to.match(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);

      const listed = await list(name);
      expectOk(listed);
      expect(listed.body.message).to.equal('1 bot found');
      expect(listed.body.integration).to.deep.equal({ status: 'active', last_error: null, fallback_bot_id: null });
      expect(listed.body.bots).to.have.length(1);
      const [enriched] = listed.body.bots;
      expect(enriched).to.include({
        ...bot,
        active_sessions: 0,
        status: 'active',
        last_error: null,
        fallback_bot_id: null,
      });
      expect(enriched).to.not.have.property('last_activity_at');
      expectOk(await list(name, `?botId=${bot.botId}`));
      expectError(await list(name, '?botId=00000000-0000-4000-8000-000000000000'), 404, 'Bot not found');
    });

    it('keyword bots need an operator and a value; regexes must be safe; the URL must name a flow', async () => {
      const { name } = await fresh();
      const cases: [unknown, string][] = [
        [{ triggerType: 'all' }, 'url is required'],
        [{ url: FLOW }, "triggerType must be 'all' or 'keyword'"],
        [
          { url: FLOW, triggerType: 'keyword', triggerValue: 'hi' },
          'triggerOperator must be one of: contains, equals, startsWith, endsWith, regex',
        ],
        [
          { url: FLOW, triggerType: 'keyword', triggerOperator: 'equals', triggerValue: '  ' },
          'triggerValue is required for keyword triggers',
        ],
        [
          { url: FLOW, triggerType: 'keyword', triggerOperator: 'regex', triggerValue: '(a+)+' },
          'triggerValue: nested quantifiers are not allowed in regex triggers',
        ],
        [
          { url: FLOW, triggerType: 'keyword', triggerOperator: 'regex', triggerValue: '([a-z]' },
          'triggerValue: invalid regex: Invalid regular expression: /([a-z]/iu: Unterminated group',
        ],
        [
          { url: 'https://viewer.example.com/', triggerType: 'all' },
          'url must name a published flow, such as https://viewer.example.com/my-flow',
        ],
        [{ url: 'ftp://viewer.example.com/flow', triggerType: 'all' }, 'url: only http and https URLs are allowed'],
        [
          { url: 'http://10.1.2.3/flow', triggerType: 'all' },
          'url: URLs pointing to internal networks are not allowed',
        ],
        [
          { url: FLOW, triggerType: 'all', typingDelayMs: 60_001 },
          "Invalid request body: field 'typingDelayMs': Too big: expected number to be <=60000",
        ],
        [
          { url: FLOW, triggerType: 'all', debounceSeconds: 1.5 },
          "Invalid request body: field 'debounceSeconds': expected int, received number",
        ],
        [
          { url: FLOW, triggerType: 'sometimes' },
          'Invalid request body: field \'triggerType\': Invalid option: expected one of "all"|"keyword"',
        ],
      ];
      for (const [body, message] of cases) expectError(await set(name, body), 400, message);
      expectError(await list(name), 404, 'Chatbot integration not found');
    });

    it('one enabled all bot; keyword bots unique per operator and value; one fallback (409, nothing changed)', async () => {
      const { name } = await fresh();
      const all = (await set(name, { url: FLOW, triggerType: 'all' })).body.bot;
      const second = await set(name, { url: FLOW, triggerType: 'all' });
      expectError(second, 409, `An enabled bot with triggerType all already exists (botId ${all.botId})`);
      const disabled = await set(name, { url: FLOW, triggerType: 'all', enabled: false });
      expectOk(disabled, 201);
      expectError(
        await patch(name, { botId: disabled.body.bot.botId, enabled: true }),
        409,
        `An enabled bot with triggerType all already exists (botId ${all.botId})`,
      );

      const menu = (
        await set(name, {
          url: FLOW,
          triggerType: 'keyword',
          triggerOperator: 'equals',
          triggerValue: 'Menu',
          fallback: true,
        })
      ).body.bot;
      expectError(
        await set(name, { url: FLOW, triggerType: 'keyword', triggerOperator: 'equals', triggerValue: ' menu ' }),
        409,
        `A keyword bot with triggerOperator equals and triggerValue 'menu' already exists (botId ${menu.botId})`,
      );
      expectOk(
        await set(name, { url: FLOW, triggerType: 'keyword', triggerOperator: 'contains', triggerValue: 'menu' }),
        201,
      );
      expectError(
        await set(name, {
          url: FLOW,
          triggerType: 'keyword',
          triggerOperator: 'startsWith',
          triggerValue: 'x',
          fallback: true,
        }),
        409,
        `Another bot is already the fallback (botId ${menu.botId})`,
      );
      const listed = await list(name);
      expect(listed.body.bots).to.have.length(4);
      expect(listed.body.integration.fallback_bot_id).to.equal(menu.botId);
    });

    it('the /api/typebot paths are the same endpoints', async () => {
      const { name, token } = await fresh();
      const created = await set(name, { url: FLOW, triggerType: 'all' }, token, 'typebot');
      expectOk(created, 201);
      const viaAlias = await node.api.get(`/api/typebot/list/${name}`, { token });
      expect(viaAlias.body.bots.map((b: any) => b.botId)).to.deep.equal([created.body.bot.botId]);
      expectOk(
        await node.api.request(
          'PATCH',
          `/api/typebot/update/${name}`,
          { botId: created.body.bot.botId, label: 'alias' },
          { token },
        ),
      );
      expectOk(await node.api.get(`/api/typebot/sessions/${name}`, { token }));
      expectOk(await node.api.delete(`/api/typebot/delete/${name}`, { token }));
      expectError(await node.api.get(`/api/chatbot/list/${name}`, { token }), 404, 'Chatbot integration not found');
    });
  });

  describe('update', () => {
    it('changes only what is sent (botId in the body or the query), recomputes the fallback, refuses bad patches', async () => {
      const { name } = await fresh();
      const bot = (
        await set(name, {
          url: FLOW,
          triggerType: 'keyword',
          triggerOperator: 'equals',
          triggerValue: 'hi',
          expireMinutes: 5,
        })
      ).body.bot;
      const res = await patch(name, {
        botId: bot.botId,
        triggerOperator: 'startsWith',
        fallback: true,
        keepOpen: true,
      });
      expectOk(res);
      expect(res.body.bot).to.include({
        triggerOperator: 'startsWith',
        triggerValue: 'hi',
        expireMinutes: 5,
        keepOpen: true,
        fallback: true,
        createdAt: bot.createdAt,
      });
      expect((await list(name)).body.integration.fallback_bot_id).to.equal(bot.botId);
      const toAll = await patch(name, { triggerType: 'all', fallback: false }, `?botId=${bot.botId}`);
      expect(toAll.body.bot).to.include({ triggerType: 'all', triggerOperator: null, triggerValue: null });
      expect((await list(name)).body.integration.fallback_bot_id).to.equal(null);

      expectError(await patch(name, { label: 'x' }), 400, 'botId is required');
      expectError(await patch(name, { botId: bot.botId }), 400, 'At least one bot field must be provided');
      expectError(
        await patch(name, { botId: '00000000-0000-4000-8000-000000000000', label: 'x' }),
        404,
        'Bot not found',
      );
      expectError(
        await patch(name, { botId: bot.botId, triggerType: 'keyword' }),
        400,
        'triggerOperator must be one of: contains, equals, startsWith, endsWith, regex',
      );
      expect((await list(name)).body.bots[0]).to.include({ triggerType: 'all', label: '' });
    });
  });

  describe('delete', () => {
    it('removes one bot, then all (the integration is deactivated); idempotent', async () => {
      const { name } = await fresh();
      const a = (await set(name, { url: FLOW, triggerType: 'all' })).body.bot;
      await set(name, { url: FLOW, triggerType: 'keyword', triggerOperator: 'equals', triggerValue: 'b' });
      await set(name, { url: FLOW, triggerType: 'keyword', triggerOperator: 'equals', triggerValue: 'c' });
      const one = await remove(name, `?botId=${a.botId}`);
      expectOk(one);
      expect(one.body).to.include({ message: 'Chatbot bot deleted', deleted: 1, remaining: 2, integration: 'active' });
      expect((await remove(name, `?botId=${a.botId}`)).body).to.include({ deleted: 0, remaining: 2 });
      const all = await remove(name);
      expect(all.body).to.include({
        message: 'Chatbot bots deleted',
        deleted: 2,
        remaining: 0,
        integration: 'deactivated',
      });
      expectError(await list(name), 404, 'Chatbot integration not found');
      expectError(
        await node.api.get(`/api/chatbot/sessions/${name}`, { token: account }),
        404,
        'Chatbot integration not found',
      );
      expectError(
        await node.api.post(
          `/api/chatbot/sessions/${name}`,
          { number: '5511999990000', action: 'close' },
          { token: account },
        ),
        404,
        'Chatbot integration not found',
      );
      expectError(
        await node.api.post(`/api/chatbot/start/${name}`, { number: '5511999990000' }, { token: account }),
        404,
        'Chatbot integration not found',
      );
      expectOk(await remove(name));
    });
  });

  describe('the creation block', () => {
    it('creates the first bot: the summary says active with its botId, the bot is listed, and so is the integration', async () => {
      const name = `block-${++seq}`;
      const res = await node.api.post(
        '/api/instance/new',
        {
          name,
          typebotEnabled: true,
          typebotUrl: FLOW,
          typebotTriggerType: 'keyword',
          typebotTriggerOperator: 'startsWith',
          typebotTriggerValue: 'hello',
          typebotDebounceSeconds: 2,
          typebotLabel: 'first',
        },
        { token: account },
      );
      expectOk(res, 201);
      expect(res.body.chatbot).to.include({
        enabled: true,
        status: 'active',
        url: FLOW,
        triggerOperator: 'startsWith',
        triggerValue: 'hello',
        debounceSeconds: 2,
        label: 'first',
      });
      const listed = await list(name);
      expect(listed.body.bots.map((b: any) => b.botId)).to.deep.equal([res.body.chatbot.botId]);
      const instances = await node.api.get(`/api/instance/list?instanceName=${name}`, { token: account });
      expect(instances.body.instances[0].chatbot).to.deep.equal({
        enabled: true,
        status: 'active',
        bots: 1,
        fallbackBotId: null,
      });
    });

    it('a block the bot rules refuse reports status error, and the instance is created without a bot', async () => {
      const name = `block-${++seq}`;
      const res = await node.api.post(
        '/api/instance/new',
        { name, chatbotEnabled: true, chatbotUrl: FLOW, chatbotTriggerType: 'all', chatbotTypingDelayMs: 999_999 },
        { token: account },
      );
      expectOk(res, 201);
      expect(res.body.chatbot).to.deep.equal({
        enabled: false,
        status: 'error',
        error: 'typingDelayMs must be an integer from 0 to 60000',
      });
      expectError(await list(name), 404, 'Chatbot integration not found');
    });
  });

  describe('errors of every endpoint', () => {
    it('401 without a token, 404 for an unknown instance', async () => {
      expect((await node.api.get('/api/chatbot/list/nope')).status).to.equal(401);
      expectError(await node.api.get('/api/chatbot/list/nope', { token: account }), 404, 'Instance not found');
      expectError(await node.api.post('/api/chatbot/set', {}, { token: account }), 400, 'Instance name is required');
    });
  });
});

describe('chatbot module switched off (CHATBOT_ENABLED=false)', () => {
  let node: TestNode;
  let account: string;

  before(async () => {
    node = await startTestNode({ ...NO_RATE_LIMITS, CHATBOT_ENABLED: 'false' });
    account = await node.createAccount('off');
  });

  after(async () => {
    await node.stop();
  });

  it('every chatbot endpoint (and alias) answers 503 integration gateway not configured, even for an unknown instance', async () => {
    await node.createInstance(account, { name: 'off-1' });
    const calls = [
      () => node.api.post('/api/chatbot/set/off-1', { url: FLOW, triggerType: 'all' }, { token: account }),
      () => node.api.request('PATCH', '/api/chatbot/update/off-1', { botId: 'x', label: 'y' }, { token: account }),
      () => node.api.get('/api/chatbot/list/off-1', { token: account }),
      () => node.api.delete('/api/chatbot/delete/off-1', { token: account }),
      () => node.api.post('/api/chatbot/start/off-1', { number: '5511999990000' }, { token: account }),
      () => node.api.get('/api/chatbot/sessions/off-1', { token: account }),
      () =>
        node.api.post('/api/chatbot/sessions/off-1', { number: '5511999990000', action: 'pause' }, { token: account }),
      () => node.api.get('/api/typebot/list/off-1', { token: account }),
      () => node.api.get('/api/chatbot/list/unknown', { token: account }),
    ];
    for (const call of calls) expectError(await call(), 503, GATEWAY_OFF);
    expect((await node.api.get('/api/chatbot/list/off-1')).status).to.equal(401);
  });

  it('a chatbot creation block reports status error with the cause; the instance is created', async () => {
    const res = await node.api.post(
      '/api/instance/new',
      { name: 'off-2', chatbotEnabled: true, chatbotUrl: FLOW, chatbotTriggerType: 'all' },
      { token: account },
    );
    expectOk(res, 201);
    expect(res.body.chatbot).to.deep.equal({ enabled: false, status: 'error', error: GATEWAY_OFF });
  });
});
