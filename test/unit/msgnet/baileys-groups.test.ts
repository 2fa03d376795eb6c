import { expect } from 'chai';
import { ForbiddenError, NotFoundError, TimeoutError } from '../../../src/errors.js';
import type { GroupEvent } from '../../../src/msgnet/msgnet-events.js';
import { connectedSession } from '../../helpers/baileys/baileys-harness.js';
import type { Harness } from '../../helpers/baileys/baileys-harness.js';
import { OWN_JID, boom } from '../../helpers/baileys/fake-baileys-socket.js';
import type { FakeSocket } from '../../helpers/baileys/fake-baileys-socket.js';

const GROUP = '120363000000000123@g.us';
const BOB = '5511988880001@s.whatsapp.net';
const CAROL = '5511988880002@s.whatsapp.net';
const DAVE = '5511988880003@s.whatsapp.net';
const ERIN = '5511988880004@s.whatsapp.net';
const LEFT = '5511988880005@s.whatsapp.net';

/** An IQ error as Baileys raises it (assertNodeErrorFree): the code in `data`, Boom's default 500 beside it. */
function iqError(code: number, text: string): Error {
  return Object.assign(new Error(text), { output: { statusCode: 500 }, data: code });
}

async function rejects(work: Promise<unknown>): Promise<Error> {
  try {
    await work;
  } catch (err) {
    return err as Error;
  }
  throw new Error('expected a rejection');
}

describe('BaileysGroups: group operations through the socket', () => {
  let h: Harness;
  let sock: FakeSocket;

  beforeEach(async () => {
    h = await connectedSession();
    sock = h.factory.last;
    sock.groups[GROUP] = {
      id: GROUP,
      subject: 'Team',
      desc: 'the team',
      owner: '77001@lid',
      ownerPn: OWN_JID,
      creation: 1_700_000_123,
      announce: true,
      restrict: false,
      memberAddMode: true,
      joinApprovalMode: false,
      linkedParent: '120363000000000999@g.us',
      participants: [
        { id: OWN_JID, admin: 'superadmin' },
        { id: '88002@lid', phoneNumber: BOB, admin: 'admin' },
        { id: CAROL, admin: null },
      ],
    };
    sock.pictures.set(GROUP, 'https://pps.example.net/group.jpg');
  });

  afterEach(async () => {
    await h.session.close();
  });

  it('info: groupMetadata and the picture, mapped to the details (phone numbers, flags, times in ms)', async () => {
    const info = await h.session.groups.info(GROUP);
    expect(sock.callsOf('groupMetadata')).to.deep.equal([[GROUP]]);
    expect(sock.callsOf('profilePictureUrl')).to.deep.equal([[GROUP, 'image']]);
    expect(info).to.deep.equal({
      jid: GROUP,
      subject: 'Team',
      description: 'the team',
      pictureUrl: 'https://pps.example.net/group.jpg',
      ownerJid: OWN_JID,
      createdAt: 1_700_000_123_000,
      settings: { announce: true, locked: false, memberAdd: true, joinApproval: false },
      members: [
        { jid: OWN_JID, isAdmin: true, isSuperAdmin: true },
        { jid: BOB, isAdmin: true, isSuperAdmin: false },
        { jid: CAROL, isAdmin: false, isSuperAdmin: false },
      ],
      communityJid: '120363000000000999@g.us',
    });
    sock.pictures.delete(GROUP);
    expect((await h.session.groups.info(GROUP)).pictureUrl).to.equal(null);
  });

  it('info: an unknown or refused group is a 404; a query left unanswered is a TimeoutError', async () => {
    const unknown = await rejects(h.session.groups.info('120363000000000404@g.us'));
    expect(unknown).to.be.instanceOf(NotFoundError);
    expect(unknown.message).to.equal('Group not found');
    sock.groupMetadata = async () => {
      throw iqError(403, 'forbidden');
    };
    expect(await rejects(h.session.groups.info(GROUP))).to.be.instanceOf(NotFoundError);
    sock.groupMetadata = async () => {
      throw new Error('Invalid group metadata response: missing <group> node');
    };
    expect(await rejects(h.session.groups.info(GROUP))).to.be.instanceOf(TimeoutError);
  });

  it('create: groupCreate with the JIDs, then the description; those privacy kept out get an invitation', async () => {
    const original = sock.groupCreate;
    // WhatsApp's answer leaves out dave, whose privacy refused the add.
    sock.groupCreate = async (subject, participants) =>
      original(
        subject,
        participants.filter((p) => p !== DAVE),
      );
    sock.participantStatus.set(DAVE, '403');
    const group = await h.session.groups.create('New', [BOB, '5511988880002', DAVE], 'about');
    expect(sock.callsOf('groupCreate')).to.deep.equal([['New', [BOB, CAROL]]]);
    const id = '120363000000000777@g.us';
    expect(sock.callsOf('groupUpdateDescription')).to.deep.equal([[id, 'about']]);
    expect(sock.callsOf('groupParticipantsUpdate')).to.deep.equal([[id, [DAVE], 'add']]);
    const [to, content] = sock.callsOf('sendMessage')[0] as [string, any];
    expect(to).to.equal(DAVE);
    expect(content.groupInvite).to.deep.include({ inviteCode: 'ADD-5511', inviteExpiration: 1_760_000_000, jid: id });
    expect(group).to.deep.include({ jid: id, subject: 'New', ownerJid: OWN_JID, createdAt: 1_700_000_000_000 });
    expect(group.members.map((m) => m.jid)).to.deep.equal([OWN_JID, BOB, CAROL]);
  });

  it('update: each field through its call, in order; a refusal names what only admins can do', async () => {
    const jpeg = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    await h.session.groups.update(GROUP, {
      subject: 'Renamed',
      description: '',
      picture: jpeg,
      announce: false,
      locked: true,
    });
    expect(sock.callsOf('groupUpdateSubject')).to.deep.equal([[GROUP, 'Renamed']]);
    expect(sock.callsOf('groupUpdateDescription')).to.deep.equal([[GROUP, '']]);
    expect(sock.callsOf('updateProfilePicture')).to.deep.equal([[GROUP, jpeg]]);
    expect(sock.callsOf('groupSettingUpdate')).to.deep.equal([
      [GROUP, 'not_announcement'],
      [GROUP, 'locked'],
    ]);
    await h.session.groups.update(GROUP, { picture: null, announce: true, locked: false });
    expect(sock.callsOf('removeProfilePicture')).to.deep.equal([[GROUP]]);
    expect(sock.callsOf('groupSettingUpdate').slice(2)).to.deep.equal([
      [GROUP, 'announcement'],
      [GROUP, 'unlocked'],
    ]);
    await h.session.groups.update(GROUP, { memberAdd: true, joinApproval: true });
    await h.session.groups.update(GROUP, { memberAdd: false, joinApproval: false });
    expect(sock.callsOf('groupMemberAddMode')).to.deep.equal([
      [GROUP, 'all_member_add'],
      [GROUP, 'admin_add'],
    ]);
    expect(sock.callsOf('groupJoinApprovalMode')).to.deep.equal([
      [GROUP, 'on'],
      [GROUP, 'off'],
    ]);
    sock.groupMemberAddMode = async () => {
      throw iqError(403, 'forbidden');
    };
    const addMode = await rejects(h.session.groups.update(GROUP, { memberAdd: true }));
    expect(addMode.message).to.equal('Only group admins can change the group settings');

    sock.groupUpdateSubject = async () => {
      throw iqError(403, 'forbidden');
    };
    const info = await rejects(h.session.groups.update(GROUP, { subject: 'x' }));
    expect(info).to.be.instanceOf(ForbiddenError);
    expect(info.message).to.equal('Only group admins can change the group info');
    sock.groupSettingUpdate = async () => {
      throw boom(401, 'not-authorized');
    };
    const settings = await rejects(h.session.groups.update(GROUP, { announce: true }));
    expect(settings).to.be.instanceOf(ForbiddenError);
    expect(settings.message).to.equal('Only group admins can change the group settings');
  });

  it('participants: each status of an add mapped, and an invitation to those who cannot be added', async () => {
    sock.participantStatus.set(CAROL, '409');
    sock.participantStatus.set(DAVE, '403');
    sock.participantStatus.set(LEFT, '408');
    sock.participantStatus.set(ERIN, '400');
    const results = await h.session.groups.participants(GROUP, 'add', [BOB, CAROL, DAVE, LEFT, ERIN]);
    expect(sock.callsOf('groupParticipantsUpdate')).to.deep.equal([[GROUP, [BOB, CAROL, DAVE, LEFT, ERIN], 'add']]);
    expect(results).to.deep.equal([
      { jid: BOB, outcome: 'added' },
      { jid: CAROL, outcome: 'already_member' },
      { jid: DAVE, outcome: 'invite_sent' },
      { jid: LEFT, outcome: 'invite_sent' },
      { jid: ERIN, outcome: 'not_on_whatsapp' },
    ]);
    const invites = (sock.callsOf('sendMessage') as [string, any][]).map(([to, c]) => [to, c.groupInvite]);
    expect(invites.map(([to]) => to)).to.deep.equal([DAVE, LEFT]);
    // Dave's own code from the add_request; the one who left recently gets the group's link.
    expect(invites[0]![1]).to.deep.include({ inviteCode: 'ADD-5511', jid: GROUP, subject: 'Team' });
    expect(invites[1]![1]).to.deep.include({ inviteCode: 'GROUPCODE123', jid: GROUP, subject: 'Team' });
    expect(sock.callsOf('groupInviteCode')).to.deep.equal([[GROUP]]);
  });

  it('participants: remove, promote and demote; 404 is not a member; other answers fail', async () => {
    sock.participantStatus.set(DAVE, '404');
    expect(await h.session.groups.participants(GROUP, 'remove', [CAROL, DAVE])).to.deep.equal([
      { jid: CAROL, outcome: 'removed' },
      { jid: DAVE, outcome: 'not_member' },
    ]);
    expect(await h.session.groups.participants(GROUP, 'promote', [CAROL])).to.deep.equal([
      { jid: CAROL, outcome: 'promoted' },
    ]);
    expect(await h.session.groups.participants(GROUP, 'demote', [BOB])).to.deep.equal([
      { jid: BOB, outcome: 'demoted' },
    ]);
    expect(sock.callsOf('groupParticipantsUpdate').map((c) => c[2])).to.deep.equal(['remove', 'promote', 'demote']);

    sock.participantStatus.set(CAROL, '500');
    expect((await rejects(h.session.groups.participants(GROUP, 'remove', [CAROL]))).message).to.equal(
      `WhatsApp answered 500 for ${CAROL}`,
    );
    sock.groupParticipantsUpdate = async () => [];
    expect(await rejects(h.session.groups.participants(GROUP, 'remove', [CAROL]))).to.be.instanceOf(TimeoutError);
    sock.groupParticipantsUpdate = async () => {
      throw iqError(403, 'forbidden');
    };
    const refused = await rejects(h.session.groups.participants(GROUP, 'add', [CAROL]));
    expect(refused).to.be.instanceOf(ForbiddenError);
    expect(refused.message).to.equal('Only group admins can add participants');
  });

  it('invite codes: read and reset through their calls; no answer is a TimeoutError', async () => {
    expect(await h.session.groups.inviteCode(GROUP)).to.equal('GROUPCODE123');
    expect(await h.session.groups.resetInviteCode(GROUP)).to.equal('RESETCODE456');
    expect(sock.callsOf('groupInviteCode')).to.deep.equal([[GROUP]]);
    expect(sock.callsOf('groupRevokeInvite')).to.deep.equal([[GROUP]]);
    sock.inviteCode = undefined;
    expect(await rejects(h.session.groups.inviteCode(GROUP))).to.be.instanceOf(TimeoutError);
  });

  it('join and leave: groupAcceptInvite and groupLeave; a bad code is a 404, a timeout a TimeoutError', async () => {
    expect(await h.session.groups.join('AbCdEf123456')).to.equal('120363000000000888@g.us');
    expect(sock.callsOf('groupAcceptInvite')).to.deep.equal([['AbCdEf123456']]);
    for (const code of [404, 406, 410]) {
      sock.groupAcceptInvite = async () => {
        throw iqError(code, 'refused');
      };
      const err = await rejects(h.session.groups.join('AbCdEf123456'));
      expect(err, String(code)).to.be.instanceOf(NotFoundError);
      expect(err.message).to.equal('The invite link is invalid or was reset');
    }
    sock.groupAcceptInvite = async () => undefined;
    expect(await rejects(h.session.groups.join('AbCdEf123456'))).to.be.instanceOf(TimeoutError);

    await h.session.groups.leave(GROUP);
    expect(sock.callsOf('groupLeave')).to.deep.equal([[GROUP]]);
    sock.groupLeave = async () => {
      throw boom(408, 'Timed Out');
    };
    const late = await rejects(h.session.groups.leave(GROUP));
    expect(late).to.be.instanceOf(TimeoutError);
    expect(late.message).to.equal('WhatsApp did not answer in time (leave the group)');
  });

  it("WhatsApp's notifications become group.flow with their author: members, name, description, settings, a new group", () => {
    sock.emit('group-participants.update', {
      id: GROUP,
      author: '88002@lid',
      authorPn: BOB,
      action: 'promote',
      participants: [{ id: CAROL }],
    });
    sock.emit('groups.update', [
      { id: GROUP, subject: 'New name', author: '88002@lid', authorPn: BOB },
      { id: GROUP, desc: 'new words', author: BOB },
      { id: GROUP, announce: true, author: BOB },
      { id: GROUP, restrict: false },
      { id: GROUP, memberAddMode: false, author: BOB },
      { id: GROUP, joinApprovalMode: true },
      // A metadata refresh (listing the groups) is no change.
      { ...sock.groups[GROUP]! },
    ]);
    sock.emit('groups.upsert', [
      {
        id: '120363000000000555@g.us',
        subject: 'Fresh',
        owner: BOB,
        author: BOB,
        participants: [{ id: BOB }, { id: OWN_JID }],
      },
    ]);
    const groups = h.events.filter((e): e is GroupEvent => e.type === 'group');
    expect(groups.map((e) => [e.action, e.groupName, e.author, e.participants.map((p) => p.jid)])).to.deep.equal([
      ['promoted', undefined, BOB, [CAROL]],
      ['name', 'New name', BOB, []],
      ['description', undefined, BOB, []],
      ['settings', undefined, BOB, []],
      ['settings', undefined, undefined, []],
      ['settings', undefined, BOB, []],
      ['settings', undefined, undefined, []],
      ['joined', 'Fresh', BOB, [BOB, OWN_JID]],
    ]);
  });

  it('join requests: groupRequestParticipantsList mapped; approve and reject through groupRequestParticipantsUpdate', async () => {
    sock.joinRequests = [
      {
        jid: '99001@lid',
        phone_number: '5511977770001@s.whatsapp.net',
        request_time: '1760000000',
        request_method: 'invite_link',
      },
      { jid: DAVE, request_time: '1760000100' },
    ];
    expect(await h.session.groups.requests(GROUP)).to.deep.equal([
      { jid: '99001@lid', phoneNumber: '5511977770001', requestedAt: 1_760_000_000_000 },
      { jid: DAVE, phoneNumber: '5511988880003', requestedAt: 1_760_000_100_000 },
    ]);
    expect(sock.callsOf('groupRequestParticipantsList')).to.deep.equal([[GROUP]]);
    expect(await h.session.groups.answerRequests(GROUP, [DAVE, ERIN], true)).to.deep.equal([
      { jid: DAVE, outcome: 'approved' },
      { jid: ERIN, outcome: 'not_requested' },
    ]);
    expect(sock.callsOf('groupRequestParticipantsUpdate')).to.deep.equal([[GROUP, [DAVE, ERIN], 'approve']]);
    expect(await h.session.groups.answerRequests(GROUP, [DAVE], false)).to.deep.equal([
      { jid: DAVE, outcome: 'rejected' },
    ]);
  });
});
