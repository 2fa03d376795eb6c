import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const NOT_CONNECTED = 'Instance is not connected to WhatsApp';
const A = '5511500000002@s.whatsapp.net';
const B = '5511500000003@s.whatsapp.net';
const C = '5511500000004@s.whatsapp.net';

describe('network operations: chats by label and tags (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let token: string;

  const byLabel = (query = '', t = token, name = 'labels') =>
    n.node.api.get(`/api/chat/contactsByLabel/${name}${query}`, { token: t });

  before(async () => {
    n = await startNetworkNode();
    token = await n.linked('labels', '5511500000001');
    const set = (chat: string, labels: { id: string; name: string }[]) =>
      n.node.api.post('/api/sandbox/labels/labels', { chat, labels }, { token });
    expectOk(
      await set('5511500000002', [
        { id: '1', name: 'VIP' },
        { id: '2', name: 'Lead' },
      ]),
    );
    expectOk(await set('5511500000003', [{ id: '2', name: 'Lead' }]));
    expectOk(await set('5511500000004', [{ id: '3', name: 'Paid' }]));
    // A label that no chat carries any more is still the account's.
    expectOk(await set('5511500000005', [{ id: '4', name: 'Archived' }]));
    expectOk(await set('5511500000005', []));
  });

  after(async () => {
    await n.stop();
  });

  it('without a filter returns every labelled chat with its labels, and the counts', async () => {
    const res = await byLabel();
    expectOk(res);
    expect(res.body).to.deep.include({
      message: 'Chats retrieved successfully',
      total_chats: 3,
      total_rows: 4,
      refreshed: false,
      filter_label_ids: [],
    });
    const byChat = Object.fromEntries(res.body.chats.map((c: any) => [c.chat_jid, c.labels]));
    expect(byChat).to.deep.equal({
      [A]: [
        { id: '1', name: 'VIP' },
        { id: '2', name: 'Lead' },
      ],
      [B]: [{ id: '2', name: 'Lead' }],
      [C]: [{ id: '3', name: 'Paid' }],
    });
  });

  it('filters by labelIds and by labelNames (case-insensitive), together', async () => {
    const ids = await byLabel('?labelIds=2');
    expect(ids.body).to.deep.include({ total_chats: 2, total_rows: 2, filter_label_ids: ['2'] });
    expect(ids.body.chats.map((c: any) => c.chat_jid).sort()).to.deep.equal([A, B]);
    const names = await byLabel('?labelNames=vip,%20PAID');
    expect(names.body).to.deep.include({ total_chats: 2, total_rows: 2 });
    expect(names.body.filter_label_ids.sort()).to.deep.equal(['1', '3']);
    const both = await byLabel('?labelIds=2&labelNames=Vip');
    expect(both.body).to.deep.include({ total_chats: 2, total_rows: 3 });
    expect(both.body.chats.find((c: any) => c.chat_jid === A).labels).to.have.length(2);
    const none = await byLabel('?labelNames=nobody');
    expect(none.body).to.deep.include({ chats: [], total_chats: 0, total_rows: 0, filter_label_ids: [] });
  });

  it('refresh=true syncs from the network first and needs the connection (503); reading the stored labels does not', async () => {
    const refreshed = await byLabel('?refresh=true');
    expectOk(refreshed);
    expect(refreshed.body).to.include({ refreshed: true, total_chats: 3 });
    const offline = await n.linked('labels-2', '5511500000011');
    expectOk(await n.node.api.post('/api/instance/logout/labels-2', {}, { token: offline }));
    expectError(await byLabel('?refresh=true', offline, 'labels-2'), 503, NOT_CONNECTED);
    const idle = await n.idle('labels-idle');
    expectError(await byLabel('?refresh=true', idle, 'labels-idle'), 503, NOT_CONNECTED);
    const stored = await byLabel('', idle, 'labels-idle');
    expectOk(stored);
    expect(stored.body).to.deep.include({ chats: [], total_chats: 0, refreshed: false });
  });

  it('answers the spec errors: no name (400), bad token (401), unknown instance (404)', async () => {
    expectError(
      await n.node.api.get('/api/chat/contactsByLabel/', { token: n.account }),
      400,
      'Instance name is required',
    );
    expectError(
      await n.node.api.get('/api/chat/contactsByLabel', { token: n.account }),
      400,
      'Instance name is required',
    );
    expectError(await byLabel('', 'not-a-token'), 401, 'Invalid token');
    expectError(
      await n.node.api.get('/api/chat/contactsByLabel/ghost', { token: n.account }),
      404,
      'Instance not found',
    );
    expectError(await byLabel('?refresh=yes'), 400, 'refresh must be true or false');
  });

  describe('tags-list and tags-assign', () => {
    let tagger: string;
    const events: EventEnvelope[] = [];

    before(async () => {
      tagger = await n.linked('tagger', '5511500000021');
      expectOk(
        await n.node.api.post(
          '/api/sandbox/labels/tagger',
          {
            chat: '5511500000022',
            labels: [
              { id: '10', name: 'New' },
              { id: '11', name: 'Hot' },
            ],
          },
          { token: tagger },
        ),
      );
      const instance = (
        await n.node.store.instances.listByAccount(
          (await n.node.store.accounts.list()).find((a) => a.name.startsWith('acct-'))!.id,
        )
      ).find((i) => i.name === 'tagger')!;
      await n.node.runtime.events.subscribe(instance.id, (e) => events.push(e));
    });

    it('lists the account’s labels with how many chats carry each', async () => {
      const res = await n.node.api.get('/api/chat/tags-list/labels', { token });
      expectOk(res);
      expect(res.body.labels).to.deep.include.members([
        { id: '1', name: 'VIP', chatCount: 1 },
        { id: '2', name: 'Lead', chatCount: 2 },
        { id: '4', name: 'Archived', chatCount: 0 },
      ]);
      expect(res.body.meta.total).to.equal(res.body.labels.length);
    });

    it('assigns and removes labels on a chat, emitting label.update, and contactsByLabel sees it', async () => {
      const added = await n.node.api.post(
        '/api/chat/tags-assign/tagger',
        { number: '5511500000023', labelIds: ['11'] },
        { token: tagger },
      );
      expectOk(added);
      expect(added.body).to.deep.include({
        message: 'Labels assigned successfully',
        chat_jid: '5511500000023@s.whatsapp.net',
        labels: [{ id: '11', name: 'Hot' }],
      });
      const hot = await byLabel('?labelNames=hot', tagger, 'tagger');
      expect(hot.body.total_chats).to.equal(2);
      const removed = await n.node.api.post(
        '/api/chat/tags-assign/tagger',
        { number: '5511500000022', labelIds: ['10', '11'], action: 'remove' },
        { token: tagger },
      );
      expect(removed.body).to.deep.include({ message: 'Labels removed successfully', labels: [] });
      expect(events.filter((e) => e.event === 'label.update').length).to.be.at.least(2);
    });

    it('refuses unknown labels (404), a missing number, and a disconnected instance', async () => {
      expectError(
        await n.node.api.post(
          '/api/chat/tags-assign/tagger',
          { number: '5511500000023', labelIds: ['99'] },
          { token: tagger },
        ),
        404,
        'Label not found: 99',
      );
      expectError(
        await n.node.api.post('/api/chat/tags-assign/tagger', { labelIds: ['10'] }, { token: tagger }),
        400,
        'Number is required',
      );
      expectError(
        await n.node.api.post('/api/chat/tags-assign/tagger', { number: '5511500000023' }, { token: tagger }),
        400,
        'labelIds is required',
      );
      expectError(
        await n.node.api.post(
          '/api/chat/tags-assign/tagger',
          { number: '5511500000023', labelIds: ['10'], action: 'toggle' },
          { token: tagger },
        ),
        400,
        'Invalid request body: field \'action\': Invalid option: expected one of "add"|"remove"',
      );
      const idle = await n.idle('tag-idle');
      expectError(
        await n.node.api.post(
          '/api/chat/tags-assign/tag-idle',
          { number: '5511500000023', labelIds: ['10'] },
          { token: idle },
        ),
        400,
        NOT_CONNECTED,
      );
      expectError(
        await n.node.api.post('/api/chat/tags-assign/', { number: '1' }, { token: n.account }),
        400,
        'Instance name is required',
      );
    });
  });
});
