import { expect } from 'chai';
import { FakeTypebot, text, textInput } from '../../helpers/fake-typebot.js';
import { startTestNode } from '../../helpers/test-node.js';
import type { TestNode } from '../../helpers/test-node.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';
import { until } from '../../helpers/until.js';

/** The chatbot's retry timer for a reply that found the instance disconnected (reply-drain.ts). */
const SEND_RETRY_MS = 3000;

/**
 * A question WhatsApp held while the bot's number was disconnected reaches it right after the login,
 * before the connection counts as open (Baileys opens it once WhatsApp answered the login's queries), so
 * its answer's first send finds the instance not connected.
 * The answer goes as soon as the connection opens (defect: it waited for the 3 s retry timer, and a chaos
 * run that ended within those 3 s judged the question unanswered).
 */
describe('chatbot: an answer held back by a reconnect (Baileys through the simulator)', function () {
  this.timeout(60_000);
  let sim: TestSimulator;
  let typebot: FakeTypebot;
  let node: TestNode;
  let token: string;
  const me = '5511977770001';
  const alice = '5511977770002';

  const connected = async () =>
    (await node.api.get('/api/instance/list', { token })).body.instances?.[0]?.connection?.state === 'connected';
  const companion = async () =>
    (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === me && !d.phone && d.linked);
  const answer = (question: string) =>
    until(
      async () => (await sim.control.received(alice)).find((r) => r.text === `echo ${question}`),
      `the answer to "${question}"`,
      20_000,
    );

  before(async () => {
    sim = await startTestSimulator();
    typebot = await FakeTypebot.start();
    node = await startTestNode({ ...sim.nodeEnv, ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
    const account = await node.createAccount('acme');
    await sim.control.addPhone(me);
    await sim.control.addPhone(alice);
    token = await node.createInstance(account, { name: 'bot' });
    const qr = await node.api.get('/api/instance/connect/bot', { token });
    await sim.control.ok('POST', `/phones/${me}/scan`, { qr: qr.body.qrCode });
    await until(connected, 'connected', 15_000);
    const url = typebot.flow('echo', [
      { messages: [], input: textInput() },
      ...Array.from({ length: 10 }, () => ({
        messages: ({ answers }: { answers: string[] }) => [text(`echo ${answers.at(-1)}`)],
        input: textInput(),
      })),
    ]);
    const set = await node.api.post('/api/chatbot/set/bot', { url, triggerType: 'all' }, { token });
    expect(set.status, set.text).to.equal(201);
  });

  after(async () => {
    await node?.stop();
    await sim?.close();
    await typebot?.close();
  });

  it('answers a question WhatsApp held during the reconnect once the connection opens, not on the retry timer', async () => {
    await sim.control.send(alice, { to: me, text: 'before' });
    await answer('before');

    // WhatsApp restarts the connection (503); the instance logs in again after a short backoff, and WhatsApp
    // is slow to answer that login's queries, so the connection opens a second after the held question.
    const device = (await companion()).jid as string;
    await sim.control.ok('POST', '/faults', { kind: 'restart', device });
    const slow = await sim.control.ok('POST', '/faults', { kind: 'slow', device, delayMs: 1000, count: 1 });
    expect(slow.applied, 'the login is slow to open: without it, this test cannot tell the fix apart').to.equal(true);
    const { id } = await sim.control.send(alice, { to: me, text: 'meanwhile' });
    const reply = await answer('meanwhile');

    const { events } = await sim.control.log();
    const delivered = events.find((e) => e.kind === 'deliver' && e.id === id && e.device === device);
    expect(delivered?.offline, 'the question was held for the disconnected device').to.equal(true);
    const receipt = events.find(
      (e) => e.kind === 'receipt' && e.device === device && ((e.ids as string[] | undefined) ?? [e.id]).includes(id),
    );
    expect(receipt, "the companion's receipt").to.not.equal(undefined);
    expect(reply.t - receipt!.t, 'ms from the receipt to the answer').to.be.below(SEND_RETRY_MS - 500);
  });
});
