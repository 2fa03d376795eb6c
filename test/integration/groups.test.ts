import { expect } from 'chai';
import { pngImage } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { flowOn, flows, groupGet, groupPost, jidsOf, linkPhone } from './group-support.js';
import type { Phone } from './group-support.js';
import { until } from '../helpers/until.js';

const NOT_CONNECTED = 'Instance is not connected to WhatsApp';
/** A number no sandbox instance has linked. */
const NOBODY = '5511720009999';
const NOBODY_JID = `${NOBODY}@s.whatsapp.net`;
const JID_PROBLEM = 'Invalid groupJid: expected <digits>@g.us or <digits>-<digits>@g.us';

describe('groups: create, read, change, members, invite links, join and leave (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: Phone;
  let bob: Phone;
  let carol: Phone;
  /** Refuses being added by anyone (`groupAdd: contacts`): gets invitations instead. */
  let dave: Phone;
  let idle: string;
  let team: string;

  const messages = (p: Phone) => p.events.filter((e) => e.event === 'message.exchange').map((e) => e.data as any);

  before(async () => {
    n = await startNetworkNode();
    [alice, bob, carol, dave] = await Promise.all([
      linkPhone(n, 'g-alice', '5511720000001'),
      linkPhone(n, 'g-bob', '5511720000002'),
      linkPhone(n, 'g-carol', '5511720000003'),
      linkPhone(n, 'g-dave', '5511720000004'),
    ]);
    idle = await n.idle('g-idle');
    const privacy = await n.node.api.post(
      '/api/profile/privacy/g-dave',
      { permissions: { groupAdd: 'contacts' } },
      { token: dave.token },
    );
    expectOk(privacy);
  });

  after(async () => {
    await n?.stop();
  });

  describe('create', () => {
    it('creates the group with its picture; members get group.flow joined; a refused add becomes an invitation', async () => {
      const png = await pngImage(900, 300);
      const res = await groupPost(n, 'create', alice, {
        subject: 'Team',
        description: 'the team',
        participants: [bob.number, `+${carol.number}`, NOBODY, dave.jid],
        picture: `data:image/png;base64,${png.toString('base64')}`,
      });
      expectOk(res);
      expect(res.body.message).to.equal('Group created successfully');
      const group = res.body.group;
      team = group.groupJid;
      expect(team).to.match(/^\d+@g\.us$/);
      expect(group).to.deep.include({
        subject: 'Team',
        description: 'the team',
        owner: alice.jid,
        settings: { announce: false, locked: false, memberAdd: false, joinApproval: false },
        memberCount: 3,
        communityJid: null,
      });
      expect(new Date(group.createdAt).toISOString()).to.equal(group.createdAt);
      expect(group.pictureUrl).to.match(/^data:image\/jpeg;base64,/);
      expect(group.members).to.deep.equal([
        { jid: alice.jid, isAdmin: true, isSuperAdmin: true },
        { jid: bob.jid, isAdmin: false, isSuperAdmin: false },
        { jid: carol.jid, isAdmin: false, isSuperAdmin: false },
      ]);

      const joined = await flowOn([alice, bob, carol], team, 'joined');
      for (const flow of joined) {
        expect(flow).to.deep.include({ groupName: 'Team', author: alice.jid });
        expect(jidsOf(flow)).to.deep.equal([alice.jid, bob.jid, carol.jid]);
      }
      expect(flows(dave, team)).to.deep.equal([]);
      await until(
        () => messages(dave).some((m) => m.message.content.text.includes('https://chat.whatsapp.com/')),
        'invite',
      );

      const outbox = await n.outbox(alice.name, alice.token);
      const created = outbox.find((e) => e.to === team && e.operation?.name === 'create');
      expect(created.type).to.equal('group');
      expect(created.operation.results).to.deep.equal([
        { jid: bob.jid, outcome: 'added' },
        { jid: carol.jid, outcome: 'added' },
        { jid: NOBODY_JID, outcome: 'not_on_whatsapp' },
        { jid: dave.jid, outcome: 'invite_sent' },
      ]);
      const invite = outbox.find((e) => e.type === 'group_invite');
      expect(invite).to.deep.include({ to: dave.jid });
      expect(invite.groupInvite).to.deep.include({ groupJid: team, subject: 'Team' });
    });

    it("each member keeps the group: info, the group list, and the group's messages", async () => {
      const info = await groupGet(n, 'info', bob, team);
      expectOk(info);
      expect(info.body.group.subject).to.equal('Team');
      expect(info.body.group.members.map((m: any) => m.jid)).to.deep.equal([alice.jid, bob.jid, carol.jid]);
      const list = await n.node.api.get(`/api/group/list/${carol.name}`, { token: carol.token });
      expect(list.body.groups.map((g: any) => g.groupJid)).to.include(team);

      const sent = await n.node.api.post(
        `/api/message/text/${bob.name}`,
        { number: team, text: 'hello team' },
        { token: bob.token },
      );
      expectOk(sent);
      const received = (p: Phone) => messages(p).find((m) => m.id === sent.body.data.messageId);
      await until(() => !!received(alice) && !!received(carol), 'the group message on the other members');
      expect(received(alice)).to.deep.include({ direction: 'incoming', recipient: team });
      expect(received(alice).chat).to.deep.include({ jid: team, type: 'group' });
      expect(received(alice).sender.jid).to.equal(bob.jid);
    });

    it('names the field of each invalid body', async () => {
      const create = (body: unknown) => groupPost(n, 'create', alice, body);
      const numbers = (count: number) =>
        Array.from({ length: count }, (_, i) => `55117300${String(i).padStart(5, '0')}`);
      expectError(await create({ participants: [bob.number] }), 400, 'subject is required');
      expectError(
        await create({ subject: ' ', participants: [bob.number] }),
        400,
        "Invalid request body: field 'subject': must be 1 to 100 characters",
      );
      expectError(
        await create({ subject: 'x'.repeat(101), participants: [bob.number] }),
        400,
        "Invalid request body: field 'subject': must be 1 to 100 characters",
      );
      expectError(await create({ subject: 'T' }), 400, 'participants is required');
      for (const count of [0, 257]) {
        expectError(
          await create({ subject: 'T', participants: numbers(count) }),
          400,
          "Invalid request body: field 'participants': takes 1 to 256 numbers",
        );
      }
      expectError(
        await create({ subject: 'T', participants: [bob.number, 'abc'] }),
        400,
        'Invalid participants[1]: expected digits with the country code (an optional +) or a JID',
      );
      expectError(
        await create({ subject: 'T', participants: [team] }),
        400,
        'Invalid request body: participants[0] is a group',
      );
      expectError(
        await create({ subject: 'T', participants: [bob.number, bob.jid] }),
        400,
        'Invalid request body: participants must be unique',
      );
      expectError(
        await create({ subject: 'T', participants: [bob.number], description: 'd'.repeat(2049) }),
        400,
        "Invalid request body: field 'description': must be at most 2048 characters",
      );
      expectError(
        await create({ subject: 'T', participants: [bob.number], picture: 'not base64!' }),
        400,
        'Invalid request body: picture is not valid base64',
      );
      const notImage = Buffer.from('plain text, not an image').toString('base64');
      const res = await create({ subject: 'T', participants: [bob.number], picture: notImage });
      expect(res.status, res.text).to.equal(400);
      expect(res.body.error.message).to.match(/^Invalid picture: /);
    });

    it('answers the state errors: not connected, unknown instance, no name', async () => {
      const body = { subject: 'T', participants: [bob.number] };
      expectError(await n.node.api.post('/api/group/create/g-idle', body, { token: idle }), 400, NOT_CONNECTED);
      expectError(
        await n.node.api.post('/api/group/create/nope', body, { token: n.account }),
        404,
        'Instance not found',
      );
      for (const path of ['create', 'update', 'invite', 'remove', 'promote', 'demote', 'reset-link', 'join', 'leave']) {
        expectError(
          await n.node.api.post(`/api/group/${path}/`, body, { token: n.account }),
          400,
          'Instance name is required',
        );
      }
      for (const path of ['info', 'invite-link']) {
        expectError(await n.node.api.get(`/api/group/${path}`, { token: n.account }), 400, 'Instance name is required');
      }
      expectError(await groupGet(n, 'info', { ...alice, name: 'g-idle', token: idle }, team), 400, NOT_CONNECTED);
    });

    it('a network failure is a 500 with its reason', async () => {
      await n.fault(alice.name, alice.token, 'groups:create', 'rate-overlimit');
      expectError(
        await groupPost(n, 'create', alice, { subject: 'T', participants: [bob.number] }),
        500,
        'Failed to create the group: rate-overlimit',
      );
    });
  });

  describe('info', () => {
    it('refuses a missing or malformed groupJid, and a group the instance is not in', async () => {
      expectError(
        await n.node.api.get(`/api/group/info/${alice.name}`, { token: alice.token }),
        400,
        'groupJid is required',
      );
      expectError(await groupGet(n, 'info', alice, '5511720000002@s.whatsapp.net'), 400, JID_PROBLEM);
      expectError(await groupGet(n, 'info', alice, '-1@g.us'), 400, JID_PROBLEM);
      expectError(await groupGet(n, 'info', alice, '120363999999999999@g.us'), 404, 'Group not found');
      expectError(await groupGet(n, 'info', dave, team), 404, 'Group not found');
    });
  });

  describe('update', () => {
    it('applies each field in order; every member reports name, description and settings', async () => {
      const res = await groupPost(n, 'update', alice, {
        groupJid: team,
        subject: 'Team 2',
        description: 'renamed',
        announce: true,
        locked: true,
      });
      expectOk(res);
      expect(res.body.group).to.deep.include({
        subject: 'Team 2',
        description: 'renamed',
        settings: { announce: true, locked: true, memberAdd: false, joinApproval: false },
      });
      const members = [alice, bob, carol];
      for (const flow of await flowOn(members, team, 'name')) {
        expect(flow).to.deep.include({ groupName: 'Team 2', author: alice.jid, participants: [] });
      }
      await flowOn(members, team, 'description', (f) => f.groupName === 'Team 2');
      await until(
        () => members.every((p) => flows(p, team).filter((f) => f.type === 'settings').length === 2),
        'settings',
      );
      const info = await groupGet(n, 'info', carol, team);
      expect(info.body.group).to.deep.include({
        subject: 'Team 2',
        settings: { announce: true, locked: true, memberAdd: false, joinApproval: false },
      });
      const outbox = await n.outbox(alice.name, alice.token, team);
      const updates = outbox.filter((e) => e.operation?.name === 'update').map((e) => e.operation);
      expect(updates[0].picture.bytes).to.be.greaterThan(0);
      expect(updates.at(-1)).to.deep.equal({
        name: 'update',
        subject: 'Team 2',
        description: 'renamed',
        announce: true,
        locked: true,
      });
    });

    it('removes the picture with null; a locked group refuses a member who is not an admin', async () => {
      expectOk(await groupPost(n, 'update', alice, { groupJid: team, picture: null }));
      expect((await groupGet(n, 'info', bob, team)).body.group.pictureUrl).to.equal(null);
      expectError(
        await groupPost(n, 'update', bob, { groupJid: team, subject: 'Mine' }),
        403,
        'Only group admins can change the group info',
      );
      expectError(
        await groupPost(n, 'update', bob, { groupJid: team, announce: false }),
        403,
        'Only group admins can change the group settings',
      );
      expectOk(await groupPost(n, 'update', alice, { groupJid: team, locked: false }));
      // Unlocked, every member edits the group's info.
      const res = await groupPost(n, 'update', bob, { groupJid: team, subject: 'Team 3' });
      expectOk(res);
      const [flow] = await flowOn([carol], team, 'name', (f) => f.groupName === 'Team 3');
      expect(flow!.author).to.equal(bob.jid);
    });

    it('names the field of each invalid body; an unknown group is a 404', async () => {
      expectError(
        await groupPost(n, 'update', alice, { groupJid: team }),
        400,
        'At least one field must be provided (subject, description, picture, announce, or locked)',
      );
      expectError(await groupPost(n, 'update', alice, { subject: 'x' }), 400, 'groupJid is required');
      expectError(await groupPost(n, 'update', alice, { groupJid: 'team', subject: 'x' }), 400, JID_PROBLEM);
      expectError(
        await groupPost(n, 'update', alice, { groupJid: team, announce: 'yes' }),
        400,
        "Invalid request body: field 'announce': expected boolean, received string",
      );
      expectError(
        await groupPost(n, 'update', alice, { groupJid: '120363999999999999@g.us', subject: 'x' }),
        404,
        'Group not found',
      );
      expectError(
        await n.node.api.post('/api/group/update/g-idle', { groupJid: team, subject: 'x' }, { token: idle }),
        400,
        NOT_CONNECTED,
      );
    });
  });
});
