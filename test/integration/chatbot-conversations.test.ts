import { expect } from 'chai';
import { choice, image, text, textInput, wait } from '../helpers/fake-typebot.js';
import type { FlowStepScript } from '../helpers/fake-typebot.js';
import { pngImage } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { jid, startChatbotHarness } from './chatbot-support.js';
import type { ChatbotHarness, ChatbotInstance } from './chatbot-support.js';
import { until } from '../helpers/until.js';

/** A flow that answers every text with an echo, for `turns` turns, waiting on a text input each time. */
function echoFlow(greeting: string | undefined, turns = 6): FlowStepScript[] {
  return [
    { messages: greeting ? [text(greeting)] : [], input: textInput() },
    ...Array.from({ length: turns }, () => ({
      messages: ({ answers }: { answers: string[] }) => [text(`You said: ${answers.at(-1)}`)],
      input: textInput(),
    })),
  ];
}

const texts = (list: any[]) => list.map((m) => (m.type === 'text' || m.type === 'buttons' ? m.text : m.type));

describe('chatbot conversations (sandbox network, fake Typebot, through HTTP)', function () {
  this.timeout(30_000);
  let h: ChatbotHarness;
  let seq = 0;
  const contact = () => `55219${String(++seq).padStart(8, '0')}`;

  before(async () => {
    h = await startChatbotHarness();
  });

  after(async () => {
    await h?.stop();
  });

  describe('a flow from start to end', () => {
    let bot: ChatbotInstance;
    let url: string;

    before(async () => {
      url = h.typebot.flow('welcome', [
        {
          messages: [text('Hello! How can we help?')],
          input: choice([
            { id: 'sales', content: 'Sales' },
            { id: 'support', content: 'Support' },
          ]),
        },
        { messages: ({ answers }) => [text(`You chose ${answers.at(-1)}. Describe it:`)], input: textInput() },
        { messages: ({ answers }) => [text(`Thanks: ${answers.at(-1)}`)] },
      ]);
      bot = await h.instance('cb-flow', '5511300000001');
      await bot.bot({ url, triggerType: 'all' });
    });

    it("starts the bot on a contact's message, sends the choice as reply buttons (ids = item ids), continues on the button reply, and closes the session at the end", async () => {
      const from = contact();
      await bot.say(from, 'hi there', { pushName: 'Ana' });
      const [first] = await bot.waitSent(jid(from), 1);
      expect(first).to.include({ type: 'buttons', text: 'Hello! How can we help?' });
      expect(first.buttons).to.deep.equal([
        { type: 'reply', id: 'sales', label: 'Sales' },
        { type: 'reply', id: 'support', label: 'Support' },
      ]);
      const [start] = h.typebot.startsFor(jid(from));
      expect(start!.body.prefilledVariables).to.include({
        remoteJid: jid(from),
        number: from,
        pushName: 'Ana',
        instanceName: 'cb-flow',
        ownerJid: jid('5511300000001'),
      });
      expect(start!.body.textBubbleContentFormat).to.equal('richText');
      const session = await bot.session(from);
      expect(session).to.include({ number: from, jid: jid(from), status: 'opened', pushName: 'Ana' });

      await bot.say(from, '', { buttonReplyId: 'support' });
      const second = await bot.waitSent(jid(from), 2);
      expect(second[1]).to.include({ type: 'text', text: 'You chose Support. Describe it:' });
      const continued = h.typebot.callsOf({ sessionId: start!.sessionId, kind: 'continue' });
      expect(continued[0]!.body.message).to.deep.equal({
        type: 'text',
        text: 'Support',
        metadata: { replyId: 'support' },
      });

      await bot.say(from, 'the printer is on fire');
      const third = await bot.waitSent(jid(from), 3);
      expect(third[2]).to.include({ type: 'text', text: 'Thanks: the printer is on fire' });
      await until(
        async () => (await bot.session(from)) === undefined,
        'the session to close at the end of the flow',
        10000,
      );

      const list = await h.net.node.api.get('/api/chatbot/list/cb-flow', { token: bot.token });
      expect(list.body.bots[0]).to.include({ active_sessions: 0, status: 'active', last_error: null });
      expect(list.body.bots[0].last_activity_at).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/);
    });

    it("a typed answer that is no choice gets the flow's retry bubble and the same buttons", async () => {
      const from = contact();
      await bot.say(from, 'hello');
      await bot.waitSent(jid(from), 1);
      await bot.say(from, 'Marketing');
      const sent = await bot.waitSent(jid(from), 2);
      expect(sent[1]).to.include({ type: 'buttons', text: 'Invalid message. Please, try again.' });
      expect(sent[1].buttons.map((b: any) => b.id)).to.deep.equal(['sales', 'support']);
      await bot.say(from, 'Sales');
      expect((await bot.waitSent(jid(from), 3))[2].text).to.equal('You chose Sales. Describe it:');
    });
  });

  describe('markup reply buttons', () => {
    it('a click on a [reply|…] button gives the flow its label as typed input', async () => {
      const inst = await h.instance('cb-markup', '5511300000008');
      await inst.bot({
        url: h.typebot.flow('markup-click', [
          { messages: [text('Ready? [reply|Yes] [reply|Not yet]')], input: textInput() },
          { messages: ({ answers }) => [text(`You said: ${answers.at(-1)}`)] },
        ]),
        triggerType: 'all',
      });
      const from = contact();
      await inst.say(from, 'go');
      const [buttons] = await inst.waitSent(jid(from), 1);
      expect(buttons).to.deep.include({
        type: 'buttons',
        text: 'Ready?',
        buttons: [
          { type: 'reply', id: 'Yes', label: 'Yes' },
          { type: 'reply', id: 'Not yet', label: 'Not yet' },
        ],
      });
      await inst.say(from, '', { buttonReplyId: 'Not yet' });
      expect((await inst.waitSent(jid(from), 2))[1].text).to.equal('You said: Not yet');
      expect(h.typebot.received('markup-click')).to.deep.equal(['Not yet']);
    });
  });

  describe('routing among bots', () => {
    let inst: ChatbotInstance;
    const flows: Record<string, string> = {};

    before(async () => {
      for (const name of ['equals', 'starts', 'ends', 'contains', 'regex', 'all']) {
        flows[name] = h.typebot.flow(`route-${name}`, [{ messages: [text(`${name} bot`)] }]);
      }
      inst = await h.instance('cb-route', '5511300000002');
      await inst.bot({ url: flows.all, triggerType: 'all' });
      await inst.bot({ url: flows.regex, triggerType: 'keyword', triggerOperator: 'regex', triggerValue: '^#\\d+$' });
      await inst.bot({
        url: flows.contains,
        triggerType: 'keyword',
        triggerOperator: 'contains',
        triggerValue: 'help',
      });
      await inst.bot({ url: flows.ends, triggerType: 'keyword', triggerOperator: 'endsWith', triggerValue: 'please' });
      await inst.bot({
        url: flows.starts,
        triggerType: 'keyword',
        triggerOperator: 'startsWith',
        triggerValue: 'order',
      });
      await inst.bot({ url: flows.equals, triggerType: 'keyword', triggerOperator: 'equals', triggerValue: 'Menu' });
    });

    const answerTo = async (message: string) => {
      const from = contact();
      await inst.say(from, message);
      return (await inst.waitSent(jid(from), 1))[0].text as string;
    };

    const cases: [string, string][] = [
      ['equals first (case-insensitive)', '  MENU '],
      ['then startsWith', 'order a pizza'],
      ['then endsWith', 'a menu, help me please'],
      ['then contains', 'I need help with a menu'],
      ['then regex', '#42'],
      ['then the all bot', 'good morning'],
    ];
    const expected = ['equals bot', 'starts bot', 'ends bot', 'contains bot', 'regex bot', 'all bot'];
    cases.forEach(([name, message], i) => it(name, async () => expect(await answerTo(message)).to.equal(expected[i])));

    it('without an all bot, the fallback bot answers what no trigger matched; nothing answers without one', async () => {
      const list = await h.net.node.api.get('/api/chatbot/list/cb-route', { token: inst.token });
      const all = list.body.bots.find((b: any) => b.triggerType === 'all');
      const equals = list.body.bots.find((b: any) => b.triggerOperator === 'equals');
      expectOk(await h.net.node.api.delete(`/api/chatbot/delete/cb-route?botId=${all.botId}`, { token: inst.token }));
      const quiet = contact();
      await inst.say(quiet, 'good evening');
      const patched = await h.net.node.api.request(
        'PATCH',
        '/api/chatbot/update/cb-route',
        { botId: equals.botId, fallback: true },
        { token: inst.token },
      );
      expectOk(patched);
      const after = await h.net.node.api.get('/api/chatbot/list/cb-route', { token: inst.token });
      expect(after.body.integration.fallback_bot_id).to.equal(equals.botId);
      expect(await answerTo('good night')).to.equal('equals bot');
      expect(h.typebot.startsFor(jid(quiet))).to.deep.equal([]);
    });
  });

  describe('session controls and manual start', () => {
    let inst: ChatbotInstance;
    let url: string;

    before(async () => {
      url = h.typebot.flow('echo', echoFlow('Hi, say something'));
      inst = await h.instance('cb-ctl', '5511300000003');
      await inst.bot({ url, triggerType: 'all' });
    });

    it('pause silences the bot (the flow never sees the message), resume brings it back, close ends the session', async () => {
      const from = contact();
      await inst.say(from, 'hello');
      await inst.waitSent(jid(from), 1);
      expect(await inst.control(from, 'pause')).to.include({ number: from, status: 'paused' });
      await inst.say(from, 'are you there?');
      expect((await inst.session(from)).status).to.equal('paused');
      const resumed = await inst.control(from, 'resume');
      expect(resumed.status).to.equal('opened');
      await inst.say(from, 'again');
      expect((await inst.waitSent(jid(from), 2))[1].text).to.equal('You said: again');
      expect(h.typebot.received('echo')).to.not.include('are you there?');
      expect(await inst.control(from, 'close')).to.include({ number: from, status: 'closed' });
      expect(await inst.session(from)).to.equal(undefined);
    });

    it('controls answer 404 for a chat without a session and 400 for a bad action or no number', async () => {
      const api = h.net.node.api;
      expectError(
        await api.post('/api/chatbot/sessions/cb-ctl', { number: contact(), action: 'pause' }, { token: inst.token }),
        404,
        'Session not found',
      );
      expectError(
        await api.post('/api/chatbot/sessions/cb-ctl', { number: contact(), action: 'stop' }, { token: inst.token }),
        400,
        'action must be one of: pause, resume, close',
      );
      expectError(
        await api.post('/api/chatbot/sessions/cb-ctl', { action: 'pause' }, { token: inst.token }),
        400,
        'Number is required',
      );
    });

    it('POST /start opens a session for a number with variables, and the flow speaks first', async () => {
      const to = contact();
      const res = await h.net.node.api.post(
        '/api/chatbot/start/cb-ctl',
        { number: `+${to}`, variables: { plan: 'gold', seats: 3 } },
        { token: inst.token },
      );
      expectOk(res);
      expect(res.body.session).to.include({ number: to, status: 'opened' });
      expect((await inst.waitSent(jid(to), 1))[0].text).to.equal('Hi, say something');
      expect(h.typebot.startsFor(jid(to))[0]!.body.prefilledVariables).to.include({
        plan: 'gold',
        seats: '3',
        remoteJid: jid(to),
      });
      await inst.say(to, 'ok');
      expect((await inst.waitSent(jid(to), 2))[1].text).to.equal('You said: ok');
    });
  });

  describe('expiry, keyword finish, debounce', () => {
    let inst: ChatbotInstance;

    before(async () => {
      inst = await h.instance('cb-timing', '5511300000004');
      await inst.bot({
        url: h.typebot.flow('timed', echoFlow('Welcome')),
        triggerType: 'keyword',
        triggerOperator: 'startsWith',
        triggerValue: 'hi',
        expireMinutes: 0.02,
        expireMessage: 'Session expired, bye',
      });
      await inst.bot({
        url: h.typebot.flow('finishing', echoFlow('Welcome')),
        triggerType: 'keyword',
        triggerOperator: 'equals',
        triggerValue: 'start',
        keywordFinish: '#stop',
        finishMessage: 'Goodbye!',
      });
      await inst.bot({
        url: h.typebot.flow('joined', echoFlow(undefined)),
        triggerType: 'keyword',
        triggerOperator: 'equals',
        triggerValue: 'frag',
        debounceSeconds: 2,
      });
    });

    it('an inactive session expires with the expiry message', async () => {
      const from = contact();
      await inst.say(from, 'hi');
      await inst.waitSent(jid(from), 1);
      const sent = await inst.waitSent(jid(from), 2, 'the expiry message');
      expect(texts(sent)).to.deep.equal(['Welcome', 'Session expired, bye']);
      expect(await inst.session(from)).to.equal(undefined);
    });

    it('the finish keyword ends the session at once with the farewell; the flow never sees it', async () => {
      const from = contact();
      await inst.say(from, 'start');
      await inst.waitSent(jid(from), 1);
      await inst.say(from, ' #STOP ');
      expect(texts(await inst.waitSent(jid(from), 2))).to.deep.equal(['Welcome', 'Goodbye!']);
      expect(await inst.session(from)).to.equal(undefined);
      expect(h.typebot.received('finishing')).to.not.include('#STOP');
    });

    it('debounce joins fragments into one answer (a flow that opens on an input gets the first text)', async () => {
      const from = contact();
      await inst.say(from, 'frag');
      await inst.say(from, 'second part');
      await inst.say(from, 'third part');
      expect((await inst.waitSent(jid(from), 1))[0].text).to.equal('You said: frag\nsecond part\nthird part');
      expect(h.typebot.received('joined')).to.deep.equal(['frag\nsecond part\nthird part']);
    });
  });

  describe('rich replies: typing delay, waits, media, markup, keepOpen', () => {
    let inst: ChatbotInstance;

    before(async () => {
      inst = await h.instance('cb-rich', '5511300000005');
      const picture = h.typebot.serve('/media/pic.png', await pngImage(32, 32), 'image/png');
      const look = text('Look:');
      const paced = text('One moment…');
      await inst.bot({
        url: h.typebot.flow('rich', [
          {
            messages: [
              look,
              image(picture),
              text(
                'Choose [reply|A] [reply|B] [reply|C] [reply|D]\n[pix:Acme Ltda;acme@example.com;EMAIL|Pay] [foo|broken]',
              ),
              paced,
            ],
            actions: [wait(1, { after: look.id! }), wait(1, { after: paced.id!, dedicated: true })],
          },
          { messages: [text('Done *for now*')] },
        ]),
        triggerType: 'all',
        typingDelayMs: 150,
        keepOpen: true,
      });
    });

    it('sends each bubble in order after "typing…", honours waits (and the dedicated reply), splits buttons by 3, sends pix apart, then holds the session', async () => {
      const from = contact();
      await inst.say(from, 'show me');
      const sent = await inst.waitSent(jid(from), 7, 'every reply of the flow');
      expect(sent.map((m) => [m.type, m.text ?? null])).to.deep.equal([
        ['text', 'Look:'],
        ['media', null],
        ['buttons', 'Choose'],
        ['buttons', '…'],
        ['payment', null],
        ['text', 'One moment…'],
        ['text', 'Done *for now*'],
      ]);
      expect(sent[1].media).to.include({ kind: 'image', mimetype: 'image/jpeg' });
      expect(sent[2].buttons.map((b: any) => b.id)).to.deep.equal(['A', 'B', 'C']);
      expect(sent[3].buttons).to.deep.equal([{ type: 'reply', id: 'D', label: 'D' }]);
      expect(sent[4].payment).to.deep.equal({ merchantName: 'Acme Ltda', key: 'acme@example.com', keyType: 'EMAIL' });
      // The waits are honoured: nothing came sooner than they allow.
      expect(sent[1].timestamp - sent[0].timestamp).to.be.at.least(1000);
      expect(sent[6].timestamp - sent[5].timestamp).to.be.at.least(1000);
      const withPresence = await inst.sent(jid(from), { presence: true });
      const firstReply = withPresence.findIndex((m) => m.type === 'text');
      expect(withPresence[firstReply - 1]).to.include({ type: 'presence', presence: 'composing' });
      expect(withPresence.filter((m) => m.type === 'presence')).to.have.length(7);
      const dedicated = h.typebot.callsOf({ publicId: 'rich', kind: 'continue' });
      expect(dedicated.map((c) => c.body.message)).to.deep.equal([undefined]);
      await until(
        async () => (await inst.session(from))?.status === 'held',
        'the session to be held (keepOpen)',
        10000,
      );
      const list = await h.net.node.api.get('/api/chatbot/list/cb-rich', { token: inst.token });
      expect(list.body.bots[0].active_sessions).to.equal(0);
    });
  });

  describe('operator replies, groups, lost and failing flows', () => {
    let inst: ChatbotInstance;
    let echo: string;

    before(async () => {
      inst = await h.instance('cb-misc', '5511300000006');
      echo = h.typebot.flow('misc-echo', echoFlow('Agent bot here'));
      await inst.bot({
        url: echo,
        triggerType: 'keyword',
        triggerOperator: 'equals',
        triggerValue: 'stopme',
        stopBotFromMe: true,
      });
      await inst.bot({
        url: h.typebot.flow('misc-all', echoFlow('Catch-all here')),
        triggerType: 'all',
        noStartFromMe: true,
      });
      await inst.bot({
        url: h.typebot.flow('misc-group', echoFlow('Hello group')),
        triggerType: 'keyword',
        triggerOperator: 'equals',
        triggerValue: 'group hi',
        ignoreGroups: false,
      });
    });

    it("stopBotFromMe: the operator's manual reply pauses the session", async () => {
      const from = contact();
      await inst.say(from, 'stopme');
      await inst.waitSent(jid(from), 1);
      expectOk(
        await h.net.node.api.post(
          '/api/message/text/cb-misc',
          { number: from, text: 'An agent here, hello!' },
          { token: inst.token },
        ),
      );
      await until(async () => (await inst.session(from))?.status === 'paused', 'the session to pause', 10_000);
    });

    it('noStartFromMe: a chat the operator opened does not start that bot; others do', async () => {
      const operatorChat = contact();
      expectOk(
        await h.net.node.api.post(
          '/api/message/text/cb-misc',
          { number: operatorChat, text: 'Hi, this is Sales' },
          { token: inst.token },
        ),
      );
      await inst.say(operatorChat, 'hello');
      const other = contact();
      await inst.say(other, 'hello');
      expect((await inst.waitSent(jid(other), 1))[0].text).to.equal('Catch-all here');
      expect(await inst.session(operatorChat)).to.equal(undefined);
      expect(h.typebot.startsFor(jid(operatorChat))).to.deep.equal([]);
    });

    it('group messages start only bots that do not ignore groups', async () => {
      const group = await h.net.node.api.post(
        '/api/sandbox/group/cb-misc',
        { subject: 'Team', participants: [{ number: '5521911110000' }] },
        { token: inst.token },
      );
      expect(group.status, group.text).to.equal(201);
      const groupJid = group.body.group.jid as string;
      await inst.say('5521911110000', 'hello', { groupJid });
      await inst.say('5521911110000', 'group hi', { groupJid });
      expect((await inst.waitSent(groupJid, 1))[0].text).to.equal('Hello group');
      expect(h.typebot.startsFor(groupJid)).to.have.length(1);
    });

    it('a session the flow lost (404) starts the flow again', async () => {
      const from = contact();
      await inst.say(from, 'stopme');
      await inst.waitSent(jid(from), 1);
      h.typebot.forget(h.typebot.startsFor(jid(from))[0]!.sessionId!);
      await inst.say(from, 'still there?');
      expect(texts(await inst.waitSent(jid(from), 2))).to.deep.equal(['Agent bot here', 'Agent bot here']);
      expect(h.typebot.startsFor(jid(from))).to.have.length(2);
      await inst.say(from, 'yes');
      expect((await inst.waitSent(jid(from), 3))[2].text).to.equal('You said: yes');
    });

    it('a failing flow marks the integration error with last_error; it recovers on the next success', async () => {
      const broken = await h.instance('cb-broken', '5511300000007');
      await broken.bot({ url: h.typebot.flow('flaky', echoFlow('Back online')), triggerType: 'all' });
      h.typebot.broken.add('flaky');
      const from = contact();
      await broken.say(from, 'hello');
      const failed = await until(
        async () => {
          const res = await h.net.node.api.get('/api/chatbot/list/cb-broken', { token: broken.token });
          return res.body.integration.status === 'error' ? res.body : undefined;
        },
        'the error status',
        10000,
      );
      expect(failed.integration.last_error).to.match(/^Chatbot flow call failed: HTTP 500/);
      expect(failed.bots[0]).to.include({ status: 'error', last_error: failed.integration.last_error });
      expect(await broken.session(from)).to.equal(undefined);
      h.typebot.broken.delete('flaky');
      await broken.say(from, 'hello again');
      expect((await broken.waitSent(jid(from), 1))[0].text).to.equal('Back online');
      const healed = await h.net.node.api.get('/api/chatbot/list/cb-broken', { token: broken.token });
      expect(healed.body.integration).to.include({ status: 'active' });
    });
  });
});
