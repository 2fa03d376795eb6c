import { expect } from 'chai';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const ALICE = '5511840000001';
const BOB = '5511840000002';
const NOT_CONNECTED = 'Instance is not connected to WhatsApp';

describe('communities: create, list, link and unlink groups', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: string;
  let bob: string;
  let idle: string;
  /** Alice's community and two of her groups, made by the first test. */
  let community: string;
  let groups: string[];

  const post = (op: string, body: unknown, name = 'alice', token = alice) =>
    n.node.api.post(`/api/community/${op}/${name}`, body, { token });
  const list = async (name = 'alice', token = alice) => {
    const res = await n.node.api.get(`/api/community/list/${name}`, { token });
    expectOk(res);
    return res.body.communities as any[];
  };
  const seedGroup = async (subject: string, name = 'alice', token = alice) => {
    const res = await n.node.api.post(
      `/api/sandbox/group/${name}`,
      { subject, participants: [{ number: BOB }] },
      { token },
    );
    expect(res.status, res.text).to.equal(201);
    return res.body.group.jid as string;
  };

  before(async () => {
    n = await startNetworkNode();
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    idle = await n.idle('communities-idle');
    groups = [await seedGroup('Team A'), await seedGroup('Team B')];
  });

  after(async () => {
    await n?.stop();
  });

  it('create: a community on the creator phone, listed with no group yet', async () => {
    const res = await post('create', { subject: 'Neighbours', description: 'Our street' });
    expectOk(res);
    expect(res.body.community).to.deep.include({ subject: 'Neighbours', description: 'Our street', groups: [] });
    community = res.body.community.jid;
    expect(community).to.match(/^\d+@g\.us$/);
    expect(await list()).to.deep.equal([res.body.community]);
    expect((await n.outbox('alice', alice, community)).at(-1)).to.deep.include({
      type: 'community',
      operation: { name: 'create', subject: 'Neighbours', description: 'Our street' },
    });
    expect(await list('bob', bob)).to.deep.equal([]);
    expectError(await post('create', { description: 'x' }), 400, 'subject is required');
    await n.fault('alice', alice, 'communities:create', 'server said no');
    expectError(await post('create', { subject: 'X' }), 500, 'Failed to create the community: server said no');
  });

  it('create with membershipApprovalMode request_required: joining the community asks an admin first', async () => {
    const res = await post('create', { name: 'Gated', membershipApprovalMode: 'request_required' });
    expectOk(res);
    expect(res.body).to.deep.include({ message: 'Community created', isCommunity: true });
    expect(res.body.community).to.deep.include({ subject: 'Gated', joinApproval: true });
    expect((await list()).find((c) => c.jid === res.body.community.jid)).to.deep.include({ joinApproval: true });
    const open = await post('create', { name: 'Open', membershipApprovalMode: 'none' });
    expectOk(open);
    expect(open.body.community).to.deep.include({ joinApproval: false });
    const bad = await post('create', { name: 'X', membershipApprovalMode: 'sometimes' });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.include('membershipApprovalMode');
  });

  it('link-group: the admin links groups; the list shows them; linking twice changes nothing', async () => {
    for (const groupJid of groups) {
      const res = await post('link-group', { communityJid: community, groupJid });
      expectOk(res);
      expect(res.body).to.deep.include({ message: 'Group linked to the community', communityJid: community, groupJid });
    }
    expectOk(await post('link-group', { communityJid: community, groupJid: groups[0] }));
    const listed = (await list()).find((c) => c.jid === community);
    expect(listed?.groups).to.deep.equal([
      { jid: groups[0], subject: 'Team A' },
      { jid: groups[1], subject: 'Team B' },
    ]);
    expect((await n.outbox('alice', alice, community)).at(-1).operation).to.deep.equal({
      name: 'link',
      groupJid: groups[1],
    });
  });

  it('link-group: a group of another community, an unknown community or group are refused', async () => {
    const other = await post('create', { subject: 'Other' });
    expectOk(other);
    expectError(
      await post('link-group', { communityJid: other.body.community.jid, groupJid: groups[0] }),
      409,
      'The group is linked to another community',
    );
    expectError(
      await post('link-group', { communityJid: '120363000000000001@g.us', groupJid: groups[0] }),
      404,
      'Community not found',
    );
    expectError(
      await post('link-group', { communityJid: community, groupJid: '120363000000000002@g.us' }),
      404,
      'Group not found',
    );
    // Bob is in the groups, but only Alice's phone keeps the community.
    const bobGroup = await seedGroup('Bob only', 'bob', bob);
    expectError(
      await post('link-group', { communityJid: community, groupJid: bobGroup }, 'bob', bob),
      404,
      'Community not found',
    );
  });

  it('unlink-group: the group leaves the community; a group not linked is refused', async () => {
    const res = await post('unlink-group', { communityJid: community, groupJid: groups[0] });
    expectOk(res);
    expect(res.body.message).to.equal('Group unlinked from the community');
    const mine = (await list()).find((c) => c.jid === community);
    expect(mine.groups).to.deep.equal([{ jid: groups[1], subject: 'Team B' }]);
    expectError(
      await post('unlink-group', { communityJid: community, groupJid: groups[0] }),
      404,
      'The group is not linked to the community',
    );
    expect((await n.outbox('alice', alice, community)).at(-1).operation).to.deep.equal({
      name: 'unlink',
      groupJid: groups[0],
    });
  });

  it('link-group and unlink-group: both JIDs are required groups, never the same one', async () => {
    for (const op of ['link-group', 'unlink-group']) {
      expectError(await post(op, { groupJid: groups[0] }), 400, 'communityJid is required');
      expectError(await post(op, { communityJid: community }), 400, 'groupJid is required');
      expectError(
        await post(op, { communityJid: '5511840000001', groupJid: groups[0] }),
        400,
        'Invalid communityJid: expected a group JID (<digits>@g.us)',
      );
      expectError(
        await post(op, { communityJid: community, groupJid: 'x@newsletter' }),
        400,
        'Invalid groupJid: expected a group JID (<digits>@g.us)',
      );
      expectError(
        await post(op, { communityJid: community, groupJid: community }),
        400,
        'Invalid groupJid: a community is not linked to itself',
      );
    }
  });

  it('message.exchange: a message in the community is isCommunity, one in a plain group or a private chat not', async () => {
    const events = await n.record(alice);
    const inbound = async (body: object) => {
      const res = await n.node.api.post('/api/sandbox/inbound/alice', { from: BOB, ...body }, { token: alice });
      expectOk(res);
      return res.body.messageId as string;
    };
    // Sent back to back: the community's message (which reads the phone's communities) is not overtaken.
    const ids = [
      await inbound({ text: 'to the community', groupJid: community }),
      await inbound({ text: 'direct' }),
      await inbound({ text: 'to a group', groupJid: groups[1] }),
    ];
    const exchanged = () => events.filter((e) => e.event === 'message.exchange').map((e) => e.data as any);
    const deadline = Date.now() + 5000;
    while (exchanged().length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
    const got = exchanged();
    expect(got.map((d) => d.id)).to.deep.equal(ids);
    expect(got.map((d) => [d.message.chat.type, d.message.chat.isCommunity, d.chat.isCommunity])).to.deep.equal([
      ['group', true, true],
      ['private', false, false],
      ['group', false, false],
    ]);
    expect(got[0].message.chat.jid).to.equal(community);
  });

  it('every operation follows the instance states and errors of the text send', async () => {
    const link = { communityJid: community, groupJid: groups[0] };
    const cases: [string, string, unknown][] = [
      ['post', 'create', { subject: 'X' }],
      ['get', 'list', undefined],
      ['post', 'link-group', link],
      ['post', 'unlink-group', link],
    ];
    for (const [method, op, body] of cases) {
      const call = (name: string, token: string, suffix = `/${name}`) =>
        method === 'get'
          ? n.node.api.get(`/api/community/${op}${suffix}`, { token })
          : n.node.api.post(`/api/community/${op}${suffix}`, body, { token });
      expectError(await call('communities-idle', idle), 400, NOT_CONNECTED);
      expectError(await call('nope', n.account), 404, 'Instance not found');
      expectError(await call('', n.account, ''), 400, 'Instance name is required');
    }
  });
});
