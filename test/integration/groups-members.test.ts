import { expect } from 'chai';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { flowOn, flows, groupGet, groupPost, jidsOf, linkPhone } from './group-support.js';
import type { Phone } from './group-support.js';
import { until } from '../helpers/until.js';

const NOT_CONNECTED = 'Instance is not connected to WhatsApp';
const NOBODY = '5511740009999';
const NOBODY_JID = `${NOBODY}@s.whatsapp.net`;
const LINK = 'https://chat.whatsapp.com/';
const NO_ANSWER = 'WhatsApp did not answer in time';

describe('groups: participants, invite links, join and leave (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let alice: Phone;
  let bob: Phone;
  let carol: Phone;
  let dave: Phone;
  let erin: Phone;
  let idle: string;
  let team: string;

  const members = (p: Phone, groupJid = team) =>
    groupGet(n, 'info', p, groupJid).then((res) => (res.body.group?.members ?? []) as any[]);

  before(async () => {
    n = await startNetworkNode();
    [alice, bob, carol, dave, erin] = await Promise.all([
      linkPhone(n, 'm-alice', '5511740000001'),
      linkPhone(n, 'm-bob', '5511740000002'),
      linkPhone(n, 'm-carol', '5511740000003'),
      linkPhone(n, 'm-dave', '5511740000004'),
      linkPhone(n, 'm-erin', '5511740000005'),
    ]);
    idle = await n.idle('m-idle');
    const created = await groupPost(n, 'create', alice, { subject: 'Crew', participants: [bob.number] });
    expectOk(created);
    team = created.body.group.groupJid;
    await flowOn([alice, bob], team, 'joined');
  });

  after(async () => {
    await n?.stop();
  });

  it('invite adds each participant (the new one hears the group from then on), with per-participant outcomes', async () => {
    expectOk(
      await n.node.api.post(
        '/api/profile/privacy/m-dave',
        { permissions: { groupAdd: 'contacts' } },
        { token: dave.token },
      ),
    );
    const res = await groupPost(n, 'invite', alice, {
      groupJid: team,
      participants: [carol.number, bob.number, NOBODY, dave.number],
    });
    expectOk(res);
    expect(res.body.groupJid).to.equal(team);
    expect(res.body.participants).to.deep.equal([
      { jid: carol.jid, outcome: 'added' },
      { jid: bob.jid, outcome: 'already_member' },
      { jid: NOBODY_JID, outcome: 'not_on_whatsapp' },
      { jid: dave.jid, outcome: 'invite_sent' },
    ]);
    for (const flow of await flowOn([alice, bob, carol], team, 'joined', (f) => jidsOf(f).includes(carol.jid))) {
      expect(flow).to.deep.include({ author: alice.jid, groupName: 'Crew' });
      expect(jidsOf(flow)).to.deep.equal([carol.jid]);
    }
    const invitation = () =>
      dave.events.find((e) => e.event === 'message.exchange' && (e.data as any).message.content.text.includes(LINK))
        ?.data as any;
    await until(() => invitation() !== undefined, 'the invitation to dave');
    expect(invitation().sender.jid).to.equal(alice.jid);
    expect((await members(carol)).map((m) => m.jid)).to.deep.equal([alice.jid, bob.jid, carol.jid]);
    const outbox = await n.outbox(alice.name, alice.token, team);
    expect(outbox.at(-1).operation).to.deep.equal({ name: 'add', results: res.body.participants });

    // Carol now hears the group's messages.
    const sent = await n.node.api.post(
      `/api/message/text/${bob.name}`,
      { number: team, text: 'hi carol' },
      { token: bob.token },
    );
    expectOk(sent);
    await until(
      () => carol.events.some((e) => e.event === 'message.exchange' && (e.data as any).id === sent.body.data.messageId),
      'the group message on the new member',
    );
  });

  it('promote and demote change admin rights; every member reports them', async () => {
    const promoted = await groupPost(n, 'promote', alice, { groupJid: team, participants: [bob.number, NOBODY] });
    expectOk(promoted);
    expect(promoted.body.participants).to.deep.equal([
      { jid: bob.jid, outcome: 'promoted' },
      { jid: NOBODY_JID, outcome: 'not_member' },
    ]);
    for (const flow of await flowOn([alice, bob, carol], team, 'promoted')) {
      expect(flow).to.deep.include({ author: alice.jid });
      expect(jidsOf(flow)).to.deep.equal([bob.jid]);
    }
    expect((await members(carol)).find((m) => m.jid === bob.jid)).to.deep.include({
      isAdmin: true,
      isSuperAdmin: false,
    });
    // Now an admin, bob reads the invite link.
    expectOk(await groupGet(n, 'invite-link', bob, team));

    const demoted = await groupPost(n, 'demote', alice, { groupJid: team, participants: [bob.number] });
    expectOk(demoted);
    expect(demoted.body.participants).to.deep.equal([{ jid: bob.jid, outcome: 'demoted' }]);
    await flowOn([alice, bob, carol], team, 'demoted');
    expect((await members(bob)).find((m) => m.jid === bob.jid)).to.deep.include({ isAdmin: false });
  });

  it('only admins change members: a plain member gets a 403', async () => {
    for (const [path, what] of [
      ['invite', 'add'],
      ['remove', 'remove'],
      ['promote', 'promote'],
      ['demote', 'demote'],
    ]) {
      expectError(
        await groupPost(n, path!, carol, { groupJid: team, participants: [bob.number] }),
        403,
        `Only group admins can ${what} participants`,
      );
    }
    expectError(await groupGet(n, 'invite-link', carol, team), 403, 'Only group admins can read the invite link');
    expectError(
      await groupPost(n, 'reset-link', carol, { groupJid: team }),
      403,
      'Only group admins can reset the invite link',
    );
  });

  it('names the field of each invalid body; an unknown group is a 404; not connected is refused', async () => {
    expectError(await groupPost(n, 'remove', alice, { participants: [bob.number] }), 400, 'groupJid is required');
    expectError(await groupPost(n, 'remove', alice, { groupJid: team }), 400, 'participants is required');
    expectError(
      await groupPost(n, 'remove', alice, { groupJid: team, participants: [] }),
      400,
      "Invalid request body: field 'participants': takes 1 to 256 numbers",
    );
    expectError(
      await groupPost(n, 'promote', alice, { groupJid: team, participants: ['12'] }),
      400,
      'Invalid participants[0]: expected digits with the country code (an optional +) or a JID',
    );
    expectError(
      await groupPost(n, 'remove', alice, { groupJid: '120363999999999999@g.us', participants: [bob.number] }),
      404,
      'Group not found',
    );
    expectError(
      await n.node.api.post(
        '/api/group/invite/m-idle',
        { groupJid: team, participants: [bob.number] },
        { token: idle },
      ),
      400,
      NOT_CONNECTED,
    );
  });

  it('remove: the removed member reports it and drops the group; the others report it too', async () => {
    const res = await groupPost(n, 'remove', alice, { groupJid: team, participants: [carol.number, dave.number] });
    expectOk(res);
    expect(res.body.participants).to.deep.equal([
      { jid: carol.jid, outcome: 'removed' },
      { jid: dave.jid, outcome: 'not_member' },
    ]);
    for (const flow of await flowOn([alice, bob, carol], team, 'left')) {
      expect(flow).to.deep.include({ author: alice.jid });
      expect(jidsOf(flow)).to.deep.equal([carol.jid]);
    }
    expectError(await groupGet(n, 'info', carol, team), 404, 'Group not found');
    expect((await members(bob)).map((m) => m.jid)).to.deep.equal([alice.jid, bob.jid]);
  });

  it('invite link, reset and join: the joiner asks the superadmin, who checks the code', async () => {
    const link = await groupGet(n, 'invite-link', alice, team);
    expectOk(link);
    const first = link.body.inviteCode as string;
    expect(link.body.inviteLink).to.equal(`${LINK}${first}`);

    const joined = await groupPost(n, 'join', dave, { link: `${LINK}${first}` });
    expectOk(joined);
    expect(joined.body.groupJid).to.equal(team);
    for (const flow of await flowOn([alice, bob, dave], team, 'joined', (f) => jidsOf(f).includes(dave.jid))) {
      expect(flow).to.deep.include({ author: dave.jid });
    }
    expect((await members(dave)).map((m) => m.jid)).to.deep.equal([alice.jid, bob.jid, dave.jid]);
    // A member joining again is answered at once.
    expectOk(await groupPost(n, 'join', dave, { inviteCode: first }));

    const reset = await groupPost(n, 'reset-link', alice, { groupJid: team });
    expectOk(reset);
    const second = reset.body.inviteCode as string;
    expect(second).to.not.equal(first);
    expect(reset.body.inviteLink).to.equal(`${LINK}${second}`);
    expectError(
      await groupPost(n, 'join', carol, { inviteCode: first }),
      404,
      'The invite link is invalid or was reset',
    );
    expectOk(await groupPost(n, 'join', carol, { inviteCode: `${LINK}${second}` }));
    await flowOn([alice, carol], team, 'joined', (f) => jidsOf(f).includes(carol.jid) && f.author === carol.jid);
    const outbox = await n.outbox(carol.name, carol.token, team);
    expect(outbox.map((e) => e.operation?.name)).to.include('join');
  });

  it('join refuses a missing, doubled or malformed code, and one the sandbox never made', async () => {
    expectError(await groupPost(n, 'join', erin, {}), 400, 'inviteCode or link is required');
    expectError(
      await groupPost(n, 'join', erin, { inviteCode: 'AbCdEfGhIj', link: `${LINK}AbCdEfGhIj` }),
      400,
      "Invalid request body: send 'inviteCode' or 'link', not both",
    );
    expectError(
      await groupPost(n, 'join', erin, { link: 'https://example.com/AbCdEfGhIj' }),
      400,
      `Invalid link: expected ${LINK}<code>`,
    );
    expectError(
      await groupPost(n, 'join', erin, { inviteCode: 'no spaces here' }),
      400,
      `Invalid inviteCode: expected the code of a ${LINK}<code> link`,
    );
    expectError(
      await groupPost(n, 'join', erin, { inviteCode: 'AbCdEfGhIjKlMnOp' }),
      404,
      'The invite link is invalid or was reset',
    );
  });

  it('join answers 504 when no admin of the group is online: at once with nobody listening, else after the wait', async () => {
    const lonely = await linkPhone(n, 'm-lonely', '5511740000009');
    const alone = await groupPost(n, 'create', lonely, { subject: 'Alone', participants: [NOBODY] });
    expectOk(alone);
    const withBob = await groupPost(n, 'create', lonely, { subject: 'With bob', participants: [bob.number] });
    expectOk(withBob);
    const codeOf = async (res: typeof alone) =>
      (await groupGet(n, 'invite-link', lonely, res.body.group.groupJid)).body.inviteCode as string;
    const [aloneCode, withBobCode] = [await codeOf(alone), await codeOf(withBob)];
    expectOk(await n.node.api.post(`/api/instance/logout/${lonely.name}`, {}, { token: lonely.token }));
    expectError(await groupPost(n, 'join', erin, { inviteCode: aloneCode }), 504, NO_ANSWER);
    // Bob hears the request on the group's JID but is no admin: nobody answers within the bound.
    expectError(await groupPost(n, 'join', erin, { inviteCode: withBobCode }), 504, NO_ANSWER);
    expectError(await groupGet(n, 'info', erin, withBob.body.group.groupJid), 404, 'Group not found');
  });

  it('leave: every member reports it; the last member leaving deletes the group', async () => {
    expectOk(await groupPost(n, 'leave', carol, { groupJid: team }));
    for (const flow of await flowOn([alice, bob, carol, dave], team, 'left', (f) => f.author === carol.jid)) {
      expect(jidsOf(flow)).to.deep.equal([carol.jid]);
    }
    expectError(await groupGet(n, 'info', carol, team), 404, 'Group not found');
    expectError(await groupPost(n, 'leave', carol, { groupJid: team }), 404, 'Group not found');

    for (const p of [bob, dave]) expectOk(await groupPost(n, 'leave', p, { groupJid: team }));
    await flowOn([alice], team, 'left', (f) => f.author === dave.jid);
    expectOk(await groupPost(n, 'leave', alice, { groupJid: team }));
    const [last] = await flowOn([alice], team, 'delete');
    expect(last).to.deep.include({ author: alice.jid, groupName: 'Crew' });
    expect(
      flows(alice, team)
        .slice(-2)
        .map((f) => f.type),
    ).to.deep.equal(['left', 'delete']);
  });
});
