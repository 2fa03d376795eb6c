import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { until } from '../helpers/until.js';

const ALICE = '5511820000001';
const BOB = '5511820000002';
const CAROL = '5511820000003';
const BOB_JID = `${BOB}@s.whatsapp.net`;
const CAROL_JID = `${CAROL}@s.whatsapp.net`;

describe('chats: presence, read, archive, pin, mute, block, clear, numbers, messages, list (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: string;
  let bob: string;
  let carol: string;
  let aliceEvents: EventEnvelope[];
  let bobEvents: EventEnvelope[];

  const post = (op: string, body: unknown, name = 'alice', token = alice) =>
    n.node.api.post(`/api/chat/${op}/${name}`, body, { token });
  const get = (op: string, query: string, name = 'alice', token = alice) =>
    n.node.api.get(`/api/chat/${op}/${name}${query}`, { token });
  const received = (events: EventEnvelope[], id: string) =>
    events.some((e) => e.event === 'message.exchange' && (e.data as any).id === id);
  /** `from` sends alice a text through its own instance; resolves once alice has it. */
  const toAlice = async (from: 'bob' | 'carol', text: string) => {
    const res = await n.node.api.post(
      `/api/message/text/${from}`,
      { number: ALICE, text },
      { token: from === 'bob' ? bob : carol },
    );
    expectOk(res);
    return res.body.data.messageId as string;
  };
  const chatOf = async (jid: string) => ((await get('list', '')).body.chats as any[]).find((c) => c.jid === jid);

  before(async () => {
    n = await startNetworkNode();
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    carol = await n.linked('carol', CAROL);
    aliceEvents = await n.record(alice);
    bobEvents = await n.record(bob);
  });

  after(async () => {
    await n?.stop();
  });

  it('presence: composing, recording, paused or available; a timed one ends with paused', async () => {
    for (const presence of ['composing', 'recording', 'paused', 'available']) {
      const res = await post('presence', { number: BOB, presence });
      expectOk(res);
      expect(res.body).to.deep.include({ chat: BOB_JID, chat_jid: BOB_JID, presence, durationMs: null, duration: 0 });
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ type: 'presence', presence });
    }
    expectOk(await post('presence', { number: BOB, presence: 'composing', durationMs: 100 }));
    let last: any;
    for (let i = 0; i < 100 && last?.presence !== 'paused'; i++) {
      last = (await n.outbox('alice', alice, BOB)).at(-1);
      if (last?.presence !== 'paused') await new Promise((r) => setTimeout(r, 30));
    }
    expect(last).to.deep.include({ type: 'presence', presence: 'paused' });

    const bad = await post('presence', { number: BOB, presence: 'typing' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('presence');
    expectError(
      await post('presence', { number: BOB }),
      400,
      "State is required. Use 'typing', 'recording', or 'pause'",
    );
    expectError(
      await post('presence', { number: BOB, presence: 'paused', durationMs: 100 }),
      400,
      'Invalid request body: durationMs is for composing and recording only',
    );
    expectError(await post('presence', { presence: 'paused' }), 400, 'Number is required');
  });

  it('read: every unread message of a chat, or the ones named; the sender gets its read receipts', async () => {
    const first = await toAlice('bob', 'one');
    const second = await toAlice('bob', 'two');
    await until(() => received(aliceEvents, first) && received(aliceEvents, second), 'both at alice', 3000);
    expect((await chatOf(BOB_JID)).unread).to.be.at.least(2);

    const res = await post('read', { number: BOB });
    expectOk(res);
    expect(res.body.messageIds).to.include.members([first, second]);
    expect((await chatOf(BOB_JID)).unread).to.equal(0);
    const readReceipt = (id: string) =>
      bobEvents.some(
        (e) =>
          e.event === 'message.status' && (e.data as any).status === 'read' && (e.data as any).messageIds.includes(id),
      );
    await until(() => readReceipt(first) && readReceipt(second), 'read receipts at bob', 3000);

    const third = await toAlice('bob', 'three');
    await until(() => received(aliceEvents, third), 'third at alice', 3000);
    const named = await post('read', { number: BOB, messageIds: [third] });
    expect(named.body.messageIds).to.deep.equal([third]);
    expect((await post('read', { number: BOB })).body.messageIds).to.deep.equal([]);
    const bad = await post('read', { number: BOB, messageIds: [] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('messageIds');
  });

  it('archive, pin and mute: the state after each, also in the chat list; archiving unpins', async () => {
    await toAlice('carol', 'hello');
    let res = await post('pin', { number: CAROL, pin: true });
    expectOk(res);
    expect(res.body).to.deep.include({ chat: CAROL_JID, pinned: true, archived: false, muted: false });
    res = await post('archive', { number: CAROL, archive: true });
    expect(res.body).to.deep.include({ archived: true, pinned: false });
    expect(await chatOf(CAROL_JID)).to.deep.include({ archived: true, pinned: false });
    expect((await post('archive', { number: CAROL, archive: false })).body.archived).to.equal(false);

    const before = Date.now();
    res = await post('mute', { number: CAROL, mute: true, durationSeconds: 3600 });
    expect(res.body.muted).to.equal(true);
    const until8h = Date.parse(res.body.mutedUntil);
    expect(until8h).to.be.within(before + 3_600_000 - 1000, Date.now() + 3_600_000 + 1000);
    expect((await post('mute', { number: CAROL, mute: true })).body).to.deep.include({
      muted: true,
      mutedUntil: 'always',
    });
    expect((await chatOf(CAROL_JID)).mutedUntil).to.equal('always');
    expect((await post('mute', { number: CAROL, mute: false })).body).to.deep.include({
      muted: false,
      mutedUntil: null,
    });

    const ops = (await n.outbox('alice', alice, CAROL)).filter((e) => e.type === 'chat').map((e) => e.operation.name);
    expect(ops).to.deep.equal(['pin', 'archive', 'archive', 'mute', 'mute', 'mute']);

    expectError(await post('archive', { number: CAROL }), 400, 'archive is required');
    expectError(await post('pin', { number: CAROL }), 400, 'pin is required');
    expectError(
      await post('mute', { number: CAROL, mute: false, durationSeconds: 10 }),
      400,
      'Invalid request body: durationSeconds is for mute: true only',
    );
    const wrong = await post('pin', { number: CAROL, pin: 'yes' });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error.message).to.include('pin');
  });

  it("block: a blocked contact's messages are not delivered until unblocked", async () => {
    const res = await post('block', { number: CAROL, block: true });
    expectOk(res);
    expect(res.body).to.deep.include({ chat: CAROL_JID, blocked: true });
    const dropped = await toAlice('carol', 'can you hear me?');
    expectOk(await post('block', { number: CAROL, block: false }));
    const heard = await toAlice('carol', 'now?');
    await until(() => received(aliceEvents, heard), 'the message after the unblock', 3000);
    expect(received(aliceEvents, dropped)).to.equal(false);
    expectError(
      await post('block', { number: '120363000000000001@g.us', block: true }),
      400,
      'Invalid request body: groups cannot be blocked; leave them',
    );
    expectError(await post('block', { number: CAROL }), 400, 'block is required');
  });

  it("clear: the chat is cleared on the device and its messages leave the instance's history", async () => {
    const id = await toAlice('carol', 'to be cleared');
    await until(() => received(aliceEvents, id), 'at alice', 3000);
    const before = await get('messages', `?number=${CAROL}`);
    expect(before.body.messages.length).to.be.greaterThan(0);
    const res = await n.node.api.request('DELETE', `/api/chat/clear/alice`, { number: CAROL }, { token: alice });
    expectOk(res);
    expect(res.body.deletedMessages).to.equal(before.body.messages.length);
    expect((await get('messages', `?number=${CAROL}`)).body.messages).to.deep.equal([]);
    expect(await chatOf(CAROL_JID)).to.equal(undefined);
    expect((await n.outbox('alice', alice, CAROL)).at(-1).operation).to.deep.equal({ name: 'clear' });
    expectError(
      await n.node.api.request('DELETE', `/api/chat/clear/alice`, {}, { token: alice }),
      400,
      'Number is required',
    );
  });

  it('whatsappNumbers: which numbers have an account, in the order asked, up to 50', async () => {
    const res = await post('whatsappNumbers', { numbers: [`+${BOB}`, '5511829999999', CAROL] });
    expectOk(res);
    expect(res.body.numbers).to.deep.equal([
      { number: `+${BOB}`, exists: true, jid: BOB_JID },
      { number: '5511829999999', exists: false, jid: null },
      { number: CAROL, exists: true, jid: CAROL_JID },
    ]);
    const many = Array.from({ length: 51 }, (_, i) => `55118200${String(i).padStart(5, '0')}`);
    expectError(
      await post('whatsappNumbers', { numbers: many }),
      400,
      'Invalid request body: numbers takes 1 to 50 items',
    );
    expectError(await post('whatsappNumbers', {}), 400, 'numbers is required');
    expectError(
      await post('whatsappNumbers', { numbers: [BOB, 'nope'] }),
      400,
      'Invalid numbers[1]: expected digits with the country code (an optional +) or a JID',
    );
  });

  it('messages: one chat, newest first, paged', async () => {
    const ids = [await toAlice('bob', 'p1'), await toAlice('bob', 'p2'), await toAlice('bob', 'p3')];
    await until(() => ids.every((id) => received(aliceEvents, id)), 'all at alice', 3000);
    const page = await get('messages', `?number=${BOB}&limit=2`);
    expectOk(page);
    expect(page.body.messages.map((m: any) => m.id)).to.deep.equal([ids[2], ids[1]]);
    expect(page.body.messages.every((m: any) => m.chat.jid === BOB_JID)).to.equal(true);
    const next = await get('messages', `?number=${BOB}&limit=2&before=${page.body.meta.nextBefore}`);
    expect(next.body.messages[0].id).to.equal(ids[0]);
    expectError(await get('messages', ''), 400, 'number is required');
    const bad = await get('messages', `?number=${BOB}&limit=0`);
    expect(bad.status).to.equal(400);
  });

  it('list: chats by their newest message, with unread, state and labels; paged by cursor', async () => {
    expectOk(
      await n.node.api.post(
        '/api/sandbox/labels/alice',
        { chat: BOB, labels: [{ id: '7', name: 'VIP' }] },
        { token: alice },
      ),
    );
    const latest = await toAlice('carol', 'latest');
    await until(() => received(aliceEvents, latest), 'latest at alice', 3000);
    const all = await get('list', '');
    expectOk(all);
    const chats = all.body.chats as any[];
    expect(chats[0]).to.deep.include({ jid: CAROL_JID, isGroup: false, unread: 1, archived: false });
    const bobChat = chats.find((c) => c.jid === BOB_JID);
    expect(bobChat.labels).to.deep.equal([{ id: '7', name: 'VIP' }]);
    expect(Date.parse(chats[0].lastMessageAt)).to.be.at.least(Date.parse(chats[1].lastMessageAt));

    const first = await get('list', '?limit=1');
    expect(first.body.chats).to.have.length(1);
    expect(first.body.meta.hasMore).to.equal(true);
    const second = await get('list', `?limit=1&cursor=${first.body.meta.nextCursor}`);
    expect(second.body.chats[0].jid).to.equal(chats[1].jid);
    expectError(await get('list', '?cursor=bogus'), 400, 'cursor is not one this API gave');
    const bad = await get('list', '?limit=201');
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('limit must be an integer from 1 to 200');
  });

  it("every operation answers not connected with 503, as the hosted product's chat pages do", async () => {
    const idle = await n.idle('chats-idle');
    const text = { status: 503 };
    const cases: [string, Record<string, unknown>][] = [
      ['presence', { number: BOB, presence: 'composing' }],
      ['read', { number: BOB }],
      ['archive', { number: BOB, archive: true }],
      ['pin', { number: BOB, pin: true }],
      ['mute', { number: BOB, mute: true }],
      ['block', { number: BOB, block: true }],
      ['whatsappNumbers', { numbers: [BOB] }],
    ];
    for (const [op, body] of cases) {
      const res = await post(op, body, 'chats-idle', idle);
      expect([res.status, res.body.error?.message], op).to.deep.equal([
        text.status,
        'Instance is not connected to WhatsApp',
      ]);
      expectError(await n.node.api.post(`/api/chat/${op}`, body, { token: alice }), 400, 'Instance name is required');
    }
    const clear = await n.node.api.request('DELETE', '/api/chat/clear/chats-idle', { number: BOB }, { token: idle });
    expect(clear.status).to.equal(text.status);
    expectError(
      await n.node.api.request('DELETE', '/api/chat/clear', { number: BOB }, { token: alice }),
      400,
      'Instance name is required',
    );
    // The history and the list are the store's: they answer while disconnected.
    expectOk(await get('list', '', 'chats-idle', idle));
    expectOk(await get('messages', `?number=${BOB}`, 'chats-idle', idle));
  });
});
