import Database from 'better-sqlite3';
import { expect } from 'chai';
import { historyRecord } from '../../src/actors/message-history.js';
import type { NormalizedMessage } from '../../src/msgnet/msgnet-events.js';
import { hashToken } from '../../src/security/tokens.js';
import { FakeTypebot, text, textInput } from '../helpers/fake-typebot.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { until } from '../helpers/until.js';
import { expectOk } from './support.js';

const CONTACT = '5521900000088';
const CHAT = `${CONTACT}@s.whatsapp.net`;
const ENV = { ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '100000' };

const contactMessage = (id: string, body: string): NormalizedMessage => ({
  id,
  fromMe: false,
  timestamp: Date.now(),
  chat: { jid: CHAT, type: 'private' },
  sender: { jid: CHAT },
  type: 'text',
  text: body,
});

/**
 * A contact's message stays owed to the extensions until the chatbot durably took it, so an owner lost in
 * between leaves it to the next one; the next owner hands over what is still owed, and the chatbot answers
 * once a message it never took (defect: the owner ended the debt before the chatbot's first write, and the
 * question went unanswered) and never again one it took just before the owner was lost.
 */
describe('chatbot: messages a previous owner owed to the extensions', function () {
  this.timeout(60_000);
  let typebot: FakeTypebot;
  let node: TestNode | undefined;

  before(async () => {
    typebot = await FakeTypebot.start();
  });
  after(async () => {
    await node?.stop();
    await typebot.close();
  });

  it('the next owner answers the one the chatbot never took, and not again the one it took', async () => {
    node = await startTestNode(ENV);
    const dir = node.dataDir;
    const account = await node.createAccount('handover');
    const token = await node.createInstance(account, { name: 'cb-hand' });
    expectOk(await node.api.get('/api/instance/connect/cb-hand', { token }));
    expectOk(await node.api.post('/api/sandbox/link/cb-hand', { number: '5511300000088' }, { token }));
    const url = typebot.flow('handover', [
      { messages: [text('Welcome')], input: textInput() },
      { messages: [text('Noted')], input: textInput() },
      { messages: [text('Noted again')], input: textInput() },
    ]);
    expect((await node.api.post('/api/chatbot/set/cb-hand', { url, triggerType: 'all' }, { token })).status).to.equal(
      201,
    );
    const replies = async () => {
      const res = await node!.api.get(`/api/sandbox/outbox/cb-hand?to=${encodeURIComponent(CHAT)}`, { token });
      return (res.body.messages as { type: string; text?: string }[])
        .filter((m) => m.type === 'text')
        .map((m) => m.text);
    };
    expectOk(await node.api.post('/api/sandbox/inbound/cb-hand', { from: CONTACT, text: 'hi' }, { token }));
    await until(async () => ((await replies()).includes('Welcome') ? true : undefined), 'the welcome', 10000);
    const answered = await node.api.post('/api/sandbox/inbound/cb-hand', { from: CONTACT, text: 'first' }, { token });
    expectOk(answered);
    await until(async () => ((await replies()).includes('Noted') ? true : undefined), 'the first answer', 10000);
    const taken = answered.body.messageId as string;
    await node.stop({ keepData: true });
    node = undefined;

    // What an owner lost at the wrong moment leaves: the message it answered still owed (lost before the
    // debt ended), and a question whose event left but which the chatbot never saw.
    const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
    const store = new SqliteStore(`${dir}/switchboard.db`);
    const instance = (await store.instances.findByTokenHash(hashToken(token)))!;
    const question = contactMessage('LOST-QUESTION-1', 'second');
    await store.messages.save(historyRecord(instance.id, question));
    const claim = { instanceId: instance.id, messageId: question.id, at: Date.now(), owed: JSON.stringify(question) };
    expect(await store.deliveries.insertOnce([], 0, claim)).to.equal(true);
    await store.close();
    // The answered message's event left with its debt, which its owner did not end before it was lost.
    const db = new Database(`${dir}/switchboard.db`);
    db.prepare('UPDATE messages SET owed = ? WHERE instance_id = ? AND id = ?').run(
      JSON.stringify(contactMessage(taken, 'first')),
      instance.id,
      taken,
    );
    const owed = db.prepare('SELECT id FROM messages WHERE owed IS NOT NULL ORDER BY id').all() as { id: string }[];
    expect(owed.map((o) => o.id)).to.deep.equal([question.id, taken].sort());
    db.close();

    node = await startTestNode(ENV, dir);
    await until(
      async () => ((await node!.store.messages.owed(instance.id, 10)).length === 0 ? true : undefined),
      'the debts ended',
      15000,
    );
    await until(async () => ((await replies()).includes('Noted again') ? true : undefined), 'the late answer', 10000);
    // One more turn of the flow (the question's); the message answered before the loss reached it once.
    expect(typebot.received('handover')).to.deep.equal(['first', 'second']);
    expect(await replies()).to.deep.equal(['Welcome', 'Noted', 'Noted again']);
  });
});
