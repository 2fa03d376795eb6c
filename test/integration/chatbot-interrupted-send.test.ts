import { expect } from 'chai';
import { AUTH_NAMESPACE, CHATBOT_NAMESPACE } from '../../src/store/namespaces.js';
import { hashToken } from '../../src/security/tokens.js';
import { FakeTypebot, text, textInput } from '../helpers/fake-typebot.js';
import { startTestNode } from '../helpers/test-node.js';
import type { TestNode } from '../helpers/test-node.js';
import { expectOk } from './support.js';
import { until } from '../helpers/until.js';

const CONTACT = '5521900000077';
const CHAT = `${CONTACT}@s.whatsapp.net`;
const ENV = { ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000', RATE_LIMIT_CREATE_PER_MINUTE: '100000' };

/**
 * A chatbot reply whose send reached the network, on an owner that stopped before recording it: the next
 * owner finds the id recorded as intent before the send, sends under it again, and the network keeps one
 * message (defect: the new owner sent the reply a second time under a new id).
 */
describe('chatbot: a reply interrupted between its send and its record', function () {
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

  it('is sent once, under the id recorded before the send, by the next owner', async () => {
    node = await startTestNode(ENV);
    const dir = node.dataDir;
    const account = await node.createAccount('interrupted');
    const token = await node.createInstance(account, { name: 'cb-int' });
    expectOk(await node.api.get('/api/instance/connect/cb-int', { token }));
    expectOk(await node.api.post('/api/sandbox/link/cb-int', { number: '5511300000077' }, { token }));
    const url = typebot.flow('interrupted', [{ messages: [text('Hello'), text('Second')], input: textInput() }]);
    // A long "typing…" before each reply: the stop comes while the first one waits to be sent.
    const set = await node.api.post(
      '/api/chatbot/set/cb-int',
      { url, triggerType: 'all', typingDelayMs: 3000 },
      { token },
    );
    expect(set.status, set.text).to.equal(201);
    expectOk(await node.api.post('/api/sandbox/inbound/cb-int', { from: CONTACT, text: 'hi' }, { token }));

    const instance = (await node.store.instances.findByTokenHash(hashToken(token)))!;
    const sendingId = await until(
      async () => {
        const raw = await node!.store.ownedState.get(instance.id, CHATBOT_NAMESPACE, `session:${CHAT}`);
        return raw ? (JSON.parse(raw) as { sendingId?: string }).sendingId : undefined;
      },
      'the intent of the first reply',
      10000,
    );
    await node.stop({ keepData: true });
    node = undefined;

    // What the old owner's send left on the network before it stopped (the sandbox keeps it in owned state).
    const { SqliteStore } = await import('../../src/store/sqlite/sqlite-store.js');
    const store = new SqliteStore(`${dir}/switchboard.db`);
    const epoch = (await store.instances.findById(instance.id))!.ownerEpoch;
    const entry = JSON.stringify({
      messageId: sendingId,
      to: CHAT,
      type: 'text',
      text: 'Hello',
      timestamp: Date.now(),
    });
    await store.ownedState.write(instance.id, epoch, [
      {
        namespace: AUTH_NAMESPACE,
        key: `outbox:${String(Date.now()).padStart(15, '0')}:000000001:${sendingId}`,
        value: entry,
      },
      { namespace: AUTH_NAMESPACE, key: `sentid:${sendingId}`, value: entry },
    ]);
    await store.close();

    node = await startTestNode(ENV, dir);
    const sent = await until(
      async () => {
        const res = await node!.api.get(`/api/sandbox/outbox/cb-int?to=${encodeURIComponent(CHAT)}`, { token });
        const texts = (res.body.messages as { type: string; text?: string; messageId: string }[]).filter(
          (m) => m.type === 'text',
        );
        return texts.some((m) => m.text === 'Second') ? texts : undefined;
      },
      'the second reply from the next owner',
      10000,
    );
    expect(sent.map((m) => m.text)).to.deep.equal(['Hello', 'Second']);
    expect(sent[0]!.messageId).to.equal(sendingId);
  });
});
