import { expect } from 'chai';
import { CHATBOT_NAMESPACE } from '../../src/store/namespaces.js';
import { FakeTypebot, text, textInput } from '../helpers/fake-typebot.js';
import { ClusterFixture, TEST_TTL_MS, connectAndLink } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';
import { until } from '../helpers/until.js';

const CONTACT = '5521977770001';
const CONTACT_JID = `${CONTACT}@s.whatsapp.net`;

describe('cluster: a chatbot conversation survives kill -9 of its owner', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let typebot: FakeTypebot;
  let account = '';
  let instanceId = '';

  before(async function () {
    this.timeout(60_000);
    typebot = await FakeTypebot.start();
    c = await ClusterFixture.start(2, { ALLOW_PRIVATE_URLS: 'true', RATE_LIMIT_PER_MINUTE: '100000' });
  });

  after(async () => {
    await c?.stop();
    await typebot?.close();
  });

  async function owner(): Promise<NodeProcess> {
    const [id] = await c.owners([instanceId]);
    return c.nodes.find((n) => n.nodeId === id)!;
  }

  /** A probe whose request fails (a node being killed, the file busy) answers "not yet". */
  const probing =
    <T>(probe: () => Promise<T | undefined>) =>
    () =>
      probe().catch(() => undefined);
  const texts = async (via: NodeProcess) => {
    const res = await via.api.get(`/api/sandbox/outbox/ha?to=${CONTACT}`, { token: account });
    return res.status === 200
      ? (res.body.messages as { type: string; text?: string }[]).filter((m) => m.type === 'text').map((m) => m.text!)
      : undefined;
  };
  const say = (via: NodeProcess, message: string) =>
    via.api.post('/api/sandbox/inbound/ha', { from: CONTACT, text: message }, { token: account });

  it('the new owner resumes the session and the pending debounce, and the flow goes on in the same Typebot session', async () => {
    const api = c.nodes[0]!.api;
    account = (await api.post('/api/admin/accounts', { name: 'chatbot-ha' }, { token: CLUSTER_ADMIN_TOKEN })).body
      .account.token as string;
    const url = typebot.flow('ha-echo', [
      { messages: [text('Hi! Tell me everything.')], input: textInput() },
      ...Array.from({ length: 4 }, () => ({
        messages: ({ answers }: { answers: string[] }) => [text(`You said: ${answers.at(-1)}`)],
        input: textInput(),
      })),
    ]);
    expect((await api.post('/api/instance/new', { name: 'ha' }, { token: account })).status).to.equal(201);
    await connectAndLink(api, api, 'ha', account, { number: '5511400000001' });
    instanceId = (
      await c.store.instances.listByAccount((await c.store.accounts.list()).find((a) => a.name === 'chatbot-ha')!.id)
    )[0]!.id;
    const created = await c.nodes[1]!.api.post(
      '/api/chatbot/set/ha',
      { url, triggerType: 'all', debounceSeconds: 4 },
      { token: account },
    );
    expect(created.status, created.text).to.equal(201);

    // A conversation under way: the flow has a session and has greeted the contact.
    expect((await say(c.nodes[1]!, 'hello')).status).to.equal(200);
    await until(
      probing(async () => ((await texts(c.nodes[0]!))?.length === 1 ? true : undefined)),
      'the greeting',
      20_000,
    );
    const [started] = typebot.startsFor(CONTACT_JID);
    const flowSession = started!.sessionId!;

    // A fragment waits in the debounce buffer (stored under the owner's epoch) when the owner dies.
    const victim = await owner();
    expect((await say(c.other(victim), 'my order never came')).status).to.equal(200);
    await until(
      probing(
        async () => (await c.store.ownedState.get(instanceId, CHATBOT_NAMESPACE, `inbox:${CONTACT_JID}`)) ?? undefined,
      ),
      'the buffered fragment in the store',
      20_000,
    );
    expect(typebot.received('ha-echo')).to.deep.equal([]);
    await victim.kill9();
    c.remove(victim);

    await c.waitAllOwned(TEST_TTL_MS + 5000, [instanceId]);
    expect((await owner()).nodeId).to.not.equal(victim.nodeId);
    const survivor = c.nodes[0]!;
    await until(
      probing(async () => ((await texts(survivor))?.includes('You said: my order never came') ? true : undefined)),
      'the buffered fragment answered by the new owner',
      20_000,
    );
    expect(
      typebot.callsOf({ sessionId: flowSession, kind: 'continue' }).map((call) => call.body.message),
    ).to.deep.equal(['my order never came']);

    // The conversation goes on in the same session, on the new owner.
    expect((await say(survivor, 'where is it?')).status).to.equal(200);
    await until(
      probing(async () => ((await texts(survivor))?.includes('You said: where is it?') ? true : undefined)),
      'the next answer',
      20_000,
    );
    expect(typebot.startsFor(CONTACT_JID)).to.have.length(1);
    const sessions = await survivor.api.get('/api/chatbot/sessions/ha', { token: account });
    expect(sessions.body.sessions).to.have.length(1);
    expect(sessions.body.sessions[0]).to.include({ number: CONTACT, status: 'opened' });
    expect(await texts(survivor)).to.deep.equal([
      'Hi! Tell me everything.',
      'You said: my order never came',
      'You said: where is it?',
    ]);
  });
});
