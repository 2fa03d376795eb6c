import { createHash } from 'node:crypto';
import { expect } from 'chai';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { pngImage, startFileServer, wavTone } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { until } from '../helpers/until.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectError, expectOk } from './support.js';

const ALICE = '5511850000001';
const BOB = '5511850000002';
const CAROL = '5511850000003';
const ALICE_JID = `${ALICE}@s.whatsapp.net`;
const BOB_JID = `${BOB}@s.whatsapp.net`;
const CAROL_JID = `${CAROL}@s.whatsapp.net`;

/**
 * The hosted product's methods, paths, fields and answers where Switchboard had the job under another
 * name (issue 38, the catalog's appendix B): each call is the body its documentation shows.
 */
describe("hosted product's routes and fields beside ours (sandbox, HTTP)", function () {
  this.timeout(60_000);
  let n: NetworkNode;
  let server: FileServer;
  let alice: string;
  let bob: string;
  let carol: string;
  let bobEvents: EventEnvelope[];
  let aliceEvents: EventEnvelope[];
  /** A group alice created with bob and carol, made by the groups test. */
  let group: string;

  const call = (method: string, path: string, body?: unknown, token = alice) =>
    n.node.api.request(method, path, body, { token });
  const inbound = async (body: Record<string, unknown>, to = 'alice', token = alice) => {
    const res = await n.node.api.post(`/api/sandbox/inbound/${to}`, { from: BOB, ...body }, { token });
    expectOk(res);
    return res.body.messageId as string;
  };
  const exchanged = (events: EventEnvelope[], id: string) =>
    until(() => events.find((e) => e.event === 'message.exchange' && (e.data as any).id === id), `message ${id}`, 5000);

  before(async () => {
    [n, server] = await Promise.all([startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }), startFileServer()]);
    server.serve('/photo.png', await pngImage(120, 80), 'image/png');
    server.serve(
      '/terms.pdf',
      Buffer.from('%PDF-1.4\n%\u00e2\u00e3\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n'),
      'application/pdf',
    );
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    carol = await n.linked('carol', CAROL);
    aliceEvents = await n.record(alice);
    bobEvents = await n.record(bob);
  });

  after(async () => {
    await Promise.all([n?.stop(), server?.close()]);
  });

  describe('messages', () => {
    it('every send answers data.chat, data.sender, and replyTo, mentions and media fields when used', async () => {
      const hello = await inbound({ text: 'hello' });
      const res = await call('POST', '/api/message/text/alice', { number: BOB, message: 'hi', replyTo: hello });
      expectOk(res);
      expect(res.body.data).to.deep.include({
        direction: 'outgoing',
        messageType: 'text',
        content: 'hi',
        replyTo: hello,
        source: 'api',
        chat: { jid: BOB_JID, isGroup: false },
        sender: { jid: ALICE_JID, instance: 'alice' },
      });
      const media = await call('POST', '/api/message/media/alice', {
        number: BOB,
        mediaType: 'image',
        mediaUrl: server.url('/photo.png'),
        message: 'look',
      });
      expectOk(media);
      expect(media.body.data).to.include({ messageType: 'image', mediaUrl: null, mediaMimeType: 'image/jpeg' });
      expect(media.body.data.mediaSize).to.be.a('number').above(0);
    });

    it('button: mediaType IMAGE, VIDEO or DOCUMENT in capitals; a document header', async () => {
      const res = await call('POST', '/api/message/button/alice', {
        number: BOB,
        contentText: 'Read the terms',
        buttons: [{ id: 'ok', displayText: 'OK', type: 'REPLY' }],
        mediaUrl: server.url('/terms.pdf'),
        mediaType: 'DOCUMENT',
      });
      expectOk(res);
      const sent = (await n.outbox('alice', alice, BOB)).at(-1);
      expect(sent).to.deep.include({ type: 'buttons', text: 'Read the terms' });
      expect(sent.media).to.include({ kind: 'document', mimetype: 'application/pdf' });
      expectOk(
        await call('POST', '/api/message/button/alice', {
          number: BOB,
          contentText: 'x',
          buttons: [{ id: 'a', displayText: 'A' }],
          mediaUrl: server.url('/photo.png'),
          mediaType: 'IMAGE',
        }),
      );
      expectError(
        await call('POST', '/api/message/button/alice', {
          number: BOB,
          contentText: 'x',
          buttons: [{ id: 'a', displayText: 'A' }],
          mediaUrl: server.url('/photo.png'),
          mediaType: 'GIF',
        }),
        400,
        'Invalid request body: mediaType must be IMAGE, VIDEO or DOCUMENT',
      );
    });

    it("GET /api/chat/poll: a tally per option and each voter's latest choice", async () => {
      const poll = await call('POST', '/api/message/poll/alice', {
        number: BOB,
        question: 'Lunch?',
        options: ['Pizza', 'Sushi'],
        maxAnswer: 1,
      });
      expectOk(poll);
      const pollId = poll.body.data.messageId as string;
      await inbound({ pollVote: { pollId, options: ['Pizza'] } });
      // A second vote of the same voter replaces the first.
      const vote = await inbound({ pollVote: { pollId, options: ['Sushi'] } });
      const res = await call('GET', `/api/chat/poll/alice?messageId=${pollId}`);
      expectOk(res);
      expect(res.body).to.deep.include({ message: 'Poll votes retrieved successfully', messageId: pollId });
      expect(res.body.data).to.deep.include({
        messageId: pollId,
        name: 'Lunch?',
        votes: [
          { optionName: 'Pizza', optionVoteCount: 0 },
          { optionName: 'Sushi', optionVoteCount: 1 },
        ],
      });
      expect(res.body.data.voteDetails).to.have.length(1);
      expect(res.body.data.voteDetails[0]).to.deep.include({
        optionName: 'Sushi',
        senderJid: BOB_JID,
        voteMessageId: vote,
        optionHash: createHash('sha256').update('Sushi').digest('hex').toUpperCase(),
      });
      expectError(await call('GET', '/api/chat/poll/alice?messageId=NOPE'), 404, 'Poll not found');
      expectError(await call('GET', '/api/chat/poll/alice'), 400, 'messageId query parameter is required');
    });

    it('GET /api/chat/getMessage: one message of the history', async () => {
      const id = await inbound({ text: 'find me' });
      const res = await call('GET', `/api/chat/getMessage/alice?messageId=${id}`);
      expectOk(res);
      expect(res.body).to.deep.include({ message: 'Message found', messageId: id, status: 'found' });
      expect(res.body.data).to.deep.include({
        content: 'find me',
        type: 'text',
        from: BOB_JID,
        to: ALICE_JID,
        chat: BOB_JID,
        isGroup: false,
        status: 'received',
      });
      expectError(
        await call('GET', '/api/chat/getMessage/alice'),
        400,
        'Message ID is required (use ?messageId=<message-id>)',
      );
      expectError(await call('GET', '/api/chat/getMessage/alice?messageId=NOPE'), 404, 'Message not found');
    });

    it('GET /api/chat/status: the hosted codes (sent 1, received 3, read 4) and direction sent/received', async () => {
      const sent = await call('POST', '/api/message/text/alice', { number: BOB, message: 'status?' });
      const mine = await call('GET', `/api/chat/status/alice?messageId=${sent.body.data.messageId}`);
      expect(mine.body).to.deep.include({
        message: 'Message status retrieved successfully',
        direction: 'sent',
      });
      expect(mine.body.status_code).to.be.oneOf([1, 2, 4]);
      const id = await inbound({ text: 'theirs' });
      const theirs = await call('GET', `/api/chat/status/alice?messageId=${id}`);
      expect(theirs.body).to.deep.include({ status: 'received', status_code: 3, direction: 'received' });
      expectError(await call('GET', '/api/chat/status/alice'), 400, 'messageId query parameter is required');
    });

    it('POST /api/chat/history: a chat between two dates, newest first, count and hasMore', async () => {
      await new Promise((r) => setTimeout(r, 5));
      const before = new Date().toISOString();
      await new Promise((r) => setTimeout(r, 5));
      const ids = [];
      for (const text of ['h1', 'h2', 'h3']) ids.push(await inbound({ text }));
      const all = await call('POST', '/api/chat/history/alice', { number: BOB, from: before, count: 10 });
      expectOk(all);
      expect(all.body).to.deep.include({ chat_jid: BOB_JID, hasMore: false });
      expect(all.body.messages.map((m: any) => m.id).slice(0, 3)).to.deep.equal([...ids].reverse());
      const two = await call('POST', '/api/chat/history/alice', { number: BOB, from: before, count: 2 });
      expect(two.body).to.deep.include({ count: 2, hasMore: true });
      const older = await call('POST', '/api/chat/history/alice', {
        number: BOB,
        from: before,
        to: two.body.messages[1].timestamp,
        count: 10,
      });
      expect(older.body.messages.map((m: any) => m.id)).to.include(ids[0]);
      expectError(
        await call('POST', '/api/chat/history/alice', { number: BOB, from: 'yesterday' }),
        400,
        "invalid 'from' date format. Use ISO 8601 format (e.g., '2026-02-16T18:32:39Z')",
      );
    });

    it('POST /api/chat/forward and /api/chat/edit: the hosted paths and answers', async () => {
      const original = await call('POST', '/api/message/text/alice', { number: BOB, message: 'first draft' });
      const id = original.body.data.messageId as string;
      const edited = await call('POST', '/api/chat/edit/alice', { messageId: id, content: 'final text' });
      expectOk(edited);
      expect(edited.body).to.deep.include({
        message: 'Message edited successfully',
        messageId: id,
        chatJid: BOB_JID,
        oldContent: 'first draft',
        newContent: 'final text',
      });
      const forwarded = await call('POST', '/api/chat/forward/alice', { messageId: id, to: CAROL });
      expectOk(forwarded);
      expect(forwarded.body).to.deep.include({
        message: 'Message forwarded successfully',
        originalId: id,
        destinationJid: CAROL_JID,
      });
      expect(forwarded.body.messageId).to.be.a('string').and.not.equal(id);
      expectError(
        await call('POST', '/api/chat/forward/alice', { messageId: id }),
        400,
        'messageId is required or to is required',
      );
      expectError(
        await call('POST', '/api/chat/forward/alice', { messageId: 'NOPE', to: CAROL }),
        404,
        'Instance not found or message not found',
      );
      expectError(await call('POST', '/api/chat/edit/alice', { messageId: id }), 400, 'content is required');
    });

    it('DELETE /api/chat/delete: for me by default, for everyone with deleteForEveryone', async () => {
      const one = await call('POST', '/api/message/text/alice', { number: BOB, message: 'oops' });
      const mine = await call('DELETE', '/api/chat/delete/alice', { messageId: one.body.data.messageId });
      expectOk(mine);
      expect(mine.body).to.deep.include({ delete_type: 'delete_for_me', chat_jid: BOB_JID });
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({
        type: 'chat',
        operation: { name: 'deleteForMe', messageId: one.body.data.messageId, deleteMedia: false },
      });
      const two = await call('POST', '/api/message/text/alice', { number: BOB, message: 'oops again' });
      const everyone = await call('DELETE', '/api/chat/delete/alice', {
        messageId: two.body.data.messageId,
        deleteForEveryone: true,
      });
      expectOk(everyone);
      expect(everyone.body.delete_type).to.equal('revoke');
      expectError(await call('DELETE', '/api/chat/delete/alice', {}), 400, 'MessageID is required');
      expectError(await call('DELETE', '/api/chat/delete/alice', { messageId: 'NOPE' }), 404, 'message not found');
    });

    it('POST /api/chat/favorite stars a message; markChatRead marks a chat read or unread', async () => {
      const id = await inbound({ text: 'keep this' });
      const fav = await call('POST', '/api/chat/favorite/alice', { messageId: id, favorite: true });
      expectOk(fav);
      expect(fav.body).to.deep.include({ type: 'message', chat_jid: BOB_JID, message_id: id, favorite: true });
      expect((await n.outbox('alice', alice, BOB)).at(-1).operation).to.deep.equal({
        name: 'star',
        messageId: id,
        star: true,
      });
      expectError(await call('POST', '/api/chat/favorite/alice', {}), 400, 'Either number or messageId is required');

      const unread = await call('POST', '/api/chat/markChatRead/alice', { number: BOB, read: false });
      expectOk(unread);
      expect(unread.body).to.deep.include({ message: 'Chat marked as unread successfully', read: false });
      const read = await call('POST', '/api/chat/markChatRead/alice', { number: BOB, read: true });
      expect(read.body).to.deep.include({ message: 'Chat marked as read successfully', chat_jid: BOB_JID });
      expect(read.body.messageIds).to.include(id);
    });
  });

  describe('chats', () => {
    it('mute takes duration as text; archive, pin, block answer chat_jid and their flags', async () => {
      let res = await call('POST', '/api/chat/mute/alice', { number: CAROL, mute: true, duration: '8h' });
      expect(res.body).to.deep.include({ message: 'Chat muted for 8 hours', muted: true, duration: 28800 });
      res = await call('POST', '/api/chat/mute/alice', { number: CAROL, mute: true, duration: '1 week' });
      expect(res.body).to.deep.include({ message: 'Chat muted for 1 week', duration: 604800 });
      res = await call('POST', '/api/chat/mute/alice', { number: CAROL, mute: true, duration: 'always' });
      expect(res.body).to.deep.include({ message: 'Chat muted permanently', duration: 0, mutedUntil: 'always' });
      res = await call('POST', '/api/chat/mute/alice', { number: CAROL, mute: false, duration: '8h' });
      expect(res.body).to.deep.include({ message: 'Chat notifications unmuted successfully', muted: false });
      expectError(
        await call('POST', '/api/chat/mute/alice', { number: CAROL, mute: true, duration: '3 fortnights' }),
        400,
        'Invalid duration: 3 fortnights',
      );

      res = await call('POST', '/api/chat/archive/alice', { number: CAROL, archive: true });
      expect(res.body).to.deep.include({ message: 'Chat archived successfully', chat_jid: CAROL_JID, archived: true });
      res = await call('POST', '/api/chat/pin/alice', { number: CAROL, pin: true });
      expect(res.body).to.deep.include({ message: 'Chat pinned successfully', chat_jid: CAROL_JID, pinned: true });
      res = await call('POST', '/api/chat/block/alice', { number: CAROL, block: true });
      expect(res.body).to.deep.include({
        message: 'Contact blocked successfully',
        contact_jid: CAROL_JID,
        blocked: true,
        blocked_count: 1,
      });
      res = await call('POST', '/api/chat/block/alice', { number: CAROL, block: false });
      expect(res.body).to.deep.include({ blocked: false, blocked_count: 0 });
    });

    it('DELETE /api/chat/deleteChat deletes a chat on this device', async () => {
      await inbound({ text: 'to be deleted' });
      const res = await call('DELETE', '/api/chat/deleteChat/alice', { number: BOB });
      expectOk(res);
      expect(res.body).to.deep.include({
        message: 'Chat deleted successfully',
        chat_jid: BOB_JID,
        delete_media: false,
      });
      expect(res.body.deletedMessages).to.be.above(0);
    });

    it('GET /api/chat/contacts without a number lists the address book with its names; with one, that contact', async () => {
      await inbound({ text: 'hi again', pushName: 'Bobby' });
      const saved = await n.node.api.post(
        '/api/sandbox/contact/alice',
        { number: CAROL, fullName: 'Carol Smith', firstName: 'Carol' },
        { token: alice },
      );
      expectOk(saved);
      const res = await call('GET', '/api/chat/contacts/alice');
      expectOk(res);
      expect(res.body.contacts).to.deep.include({
        jid: BOB_JID,
        lid: null,
        found: true,
        first_name: null,
        full_name: null,
        push_name: 'Bobby',
        business_name: null,
      });
      expect(res.body.contacts).to.deep.include({
        jid: CAROL_JID,
        lid: null,
        found: true,
        first_name: 'Carol',
        full_name: 'Carol Smith',
        push_name: null,
        business_name: null,
      });
      expect(res.body.total).to.equal(res.body.contacts.length);
      expect(res.body.message).to.equal(`${res.body.total} contacts found`);
      // Bob writes again under a new push name: the book keeps one entry for him, with the newest name.
      await inbound({ text: 'renamed', pushName: 'Bob B.' });
      const again = await call('GET', '/api/chat/contacts/alice');
      expect(again.body.contacts.filter((c: { jid: string }) => c.jid === BOB_JID)).to.have.length(1);
      expect(again.body.contacts.find((c: { jid: string }) => c.jid === BOB_JID).push_name).to.equal('Bob B.');

      const one = await call('GET', `/api/chat/contacts/alice?number=${CAROL}`);
      expectOk(one);
      expect(one.body.contact).to.deep.equal({
        found: true,
        jid: CAROL_JID,
        lid: null,
        inAddressBook: true,
        first_name: 'Carol',
        full_name: 'Carol Smith',
        push_name: null,
        business_name: null,
      });
      const stranger = await call('GET', '/api/chat/contacts/alice?number=5511850009999');
      expectOk(stranger);
      expect(stranger.body.contact).to.deep.include({ found: false, inAddressBook: false, full_name: null });
      expectError(
        await call('GET', '/api/chat/contacts/alice?number=abc'),
        400,
        'Invalid number: expected digits with the country code (an optional +) or a JID',
      );
    });

    it('labels: /tag lists, creates and deletes; /assignTag assigns and unassigns', async () => {
      const created = await call('POST', '/api/chat/tag/alice', { name: '  VIP  ', color: 3 });
      expectOk(created);
      expect(created.body).to.deep.include({ message: 'Tag created successfully' });
      expect(created.body.tag).to.deep.include({ name: 'VIP', color: 3, type: 'CUSTOM', deleted: false });
      const tagId = created.body.tag.id as string;
      const listed = await call('GET', '/api/chat/tag/alice');
      expect(listed.body.tags).to.deep.include({ id: tagId, name: 'VIP', color: 0, type: 'CUSTOM', deleted: false });
      expect(listed.body.total).to.equal(listed.body.tags.length);

      const assigned = await call('POST', '/api/chat/assignTag/alice', { number: BOB, tagId });
      expect(assigned.body).to.deep.include({ message: 'Tag assigned successfully', tag_id: tagId });
      const byLabel = await call('GET', `/api/chat/contactsByLabel/alice?labelIds=${tagId}`);
      expect(byLabel.body.chats).to.deep.equal([{ chat_jid: BOB_JID, labels: [{ id: tagId, name: 'VIP' }] }]);
      const removed = await call('DELETE', `/api/chat/assignTag/alice?number=${BOB}&tagId=${tagId}`);
      expect(removed.body).to.deep.include({ message: 'Tag removed successfully', tag_id: tagId });
      expectOk(await call('POST', '/api/chat/assignTag/alice', { number: BOB, tagId }));

      const deleted = await call('DELETE', `/api/chat/tag/alice?tagId=${tagId}`);
      expect(deleted.body).to.deep.include({ message: 'Tag deleted successfully' });
      expect(deleted.body.tag).to.deep.equal({ id: tagId, name: '', color: 0, type: '', deleted: true });
      expect((await call('GET', `/api/chat/contactsByLabel/alice?labelIds=${tagId}`)).body.chats).to.deep.equal([]);

      expectError(await call('POST', '/api/chat/tag/alice', { name: ' ' }), 400, 'Tag name is required');
      expectError(await call('DELETE', '/api/chat/tag/alice'), 400, 'tagId query parameter is required');
      expectError(await call('DELETE', '/api/chat/tag/alice?tagId=999'), 404, 'Tag not found');
      expectError(await call('POST', '/api/chat/assignTag/alice', { number: BOB }), 400, 'tagId is required');
      expectError(await call('POST', '/api/chat/assignTag/alice', { number: BOB, tagId: '999' }), 404, 'Tag not found');
      expectError(await call('DELETE', '/api/chat/assignTag/alice?tagId=1'), 400, 'number query parameter is required');
    });
  });

  describe('groups and communities', () => {
    it('create takes name, image and groupSettings; answers the GroupInfo fields', async () => {
      const res = await call('POST', '/api/group/create/alice', {
        name: 'Buyers',
        participants: [BOB, CAROL],
        image: server.url('/photo.png'),
        groupSettings: {
          membersCanSendMessages: false,
          membersCanEditInfo: true,
          membersCanAddOthers: true,
          requireAdminApproval: false,
        },
      });
      expectOk(res);
      group = res.body.jid;
      expect(group).to.match(/@g\.us$/);
      expect(res.body).to.deep.include({ name: 'Buyers', participantCount: 3, createdBy: ALICE_JID });
      expect(res.body.groupSettings).to.deep.equal({
        membersCanSendMessages: false,
        membersCanEditInfo: true,
        membersCanAddOthers: true,
        requireAdminApproval: false,
      });
      expect(res.body.group.settings).to.deep.equal({
        announce: true,
        locked: false,
        memberAdd: true,
        joinApproval: false,
      });
      expect(res.body.participants.map((p: any) => p.jid)).to.include.members([ALICE_JID, BOB_JID, CAROL_JID]);
      expect(res.body.inviteCode).to.be.a('string').and.not.be.empty;
      expect(res.body.inviteLink).to.equal(`https://chat.whatsapp.com/${res.body.inviteCode}`);
      expect(res.body.group).to.include({ inviteCode: res.body.inviteCode, inviteLink: res.body.inviteLink });
    });

    it('info takes ?identifier= and participants=false', async () => {
      const res = await call('GET', `/api/group/info/alice?identifier=${group}&participants=false`);
      expectOk(res);
      expect(res.body).to.deep.include({ jid: group, name: 'Buyers', participantCount: 3, participants: [] });
      expect(res.body.inviteLink).to.equal(`https://chat.whatsapp.com/${res.body.inviteCode}`);
      // Only admins may read the link: a plain member's GroupInfo has it null.
      const asMember = await call('GET', `/api/group/info/carol?identifier=${group}`, undefined, carol);
      expectOk(asMember);
      expect(asMember.body).to.include({ jid: group, inviteCode: null, inviteLink: null });
    });

    it('groupSettings are applied: membersCanAddOthers lets a plain member add, requireAdminApproval reads back', async () => {
      // Carol is a plain member: the group lets members add, so her add reaches the network.
      const byMember = await call(
        'POST',
        '/api/group/participants/carol',
        { action: 'add', identifier: group, participants: ['5511850009998'] },
        carol,
      );
      expectOk(byMember);
      expect(byMember.body.participants).to.deep.equal([
        { jid: '5511850009998@s.whatsapp.net', outcome: 'not_on_whatsapp', success: false, error: 'not_on_whatsapp' },
      ]);
      const updated = await call('PUT', '/api/group/update/alice', {
        identifier: group,
        groupSettings: { membersCanAddOthers: false, requireAdminApproval: true },
      });
      expectOk(updated);
      expect(updated.body.message).to.equal('Group updated successfully: groupSettings');
      const info = await call('GET', `/api/group/info/carol?identifier=${group}`, undefined, carol);
      expect(info.body.groupSettings).to.deep.equal({
        membersCanSendMessages: false,
        membersCanEditInfo: true,
        membersCanAddOthers: false,
        requireAdminApproval: true,
      });
      expectError(
        await call(
          'POST',
          '/api/group/participants/carol',
          { action: 'add', identifier: group, participants: ['5511850009998'] },
          carol,
        ),
        403,
        'Only group admins can add participants',
      );
      expectError(
        await call(
          'PUT',
          '/api/group/update/carol',
          { identifier: group, groupSettings: { membersCanAddOthers: true } },
          carol,
        ),
        403,
        'Only group admins can change the group settings',
      );
      expectOk(
        await call('PUT', '/api/group/update/alice', {
          identifier: group,
          groupSettings: { requireAdminApproval: false },
        }),
      );
    });

    it('PUT update with identifier and name; POST participants with an action; resetLink; join and DELETE leave', async () => {
      const updated = await call('PUT', '/api/group/update/alice', { identifier: group, name: 'Buyers 2' });
      expectOk(updated);
      expect(updated.body).to.deep.include({ message: 'Group updated successfully: name', name: 'Buyers 2' });
      expect(updated.body).to.include.keys('jid', 'description', 'createdBy', 'participantCount', 'groupSettings');
      expect(updated.body.inviteLink).to.equal(`https://chat.whatsapp.com/${updated.body.inviteCode}`);
      expectError(await call('PUT', '/api/group/update/alice', { name: 'x' }), 400, 'Identifier is required');

      const promoted = await call('POST', '/api/group/participants/alice', {
        action: 'promote',
        identifier: group,
        participants: [BOB],
      });
      expectOk(promoted);
      expect(promoted.body.participants).to.deep.equal([
        { jid: BOB_JID, outcome: 'promoted', success: true, error: null },
      ]);
      expectError(
        await call('POST', '/api/group/participants/alice', { identifier: group, participants: [BOB] }),
        400,
        'action is required',
      );

      const removed = await call('POST', '/api/group/participants/alice', {
        action: 'remove',
        identifier: group,
        participants: [CAROL],
      });
      expect(removed.body.participants[0]).to.deep.include({ jid: CAROL_JID, success: true });

      const reset = await call('POST', '/api/group/resetLink/alice', { identifier: group });
      expectOk(reset);
      expect(reset.body).to.include({ message: 'Group invite link reset successfully', groupJid: group });
      expect(reset.body.inviteLink).to.match(/^https:\/\/chat\.whatsapp\.com\//);
      expectError(await call('POST', '/api/group/resetLink/alice', {}), 400, 'Identifier is required');

      const joined = await call('POST', '/api/group/join/carol', { identifier: reset.body.inviteLink }, carol);
      expectOk(joined);
      expect(joined.body).to.deep.include({ groupJid: group, requiresApproval: false });

      const left = await call('DELETE', `/api/group/leave/carol?identifier=${group}`, undefined, carol);
      expectOk(left);
      expect(left.body).to.deep.include({ message: 'Successfully left the group', groupJid: group });
    });

    it('GET /api/group/requests and approve/reject (the sandbox models no approval queue: none pending)', async () => {
      const res = await call('GET', `/api/group/requests/alice?identifier=${group}`);
      expectOk(res);
      expect(res.body).to.deep.include({
        message: '0 pending requests found',
        groupJid: group,
        requests: [],
        meta: { total: 0 },
      });
      expectError(await call('GET', '/api/group/requests/alice'), 400, 'Identifier is required');
      const approved = await call('POST', '/api/group/participants/alice', {
        action: 'approve',
        identifier: group,
        participants: [CAROL],
      });
      expectOk(approved);
      expect(approved.body.participants).to.deep.equal([
        { jid: CAROL_JID, outcome: 'not_requested', success: false, error: 'not_requested' },
      ]);
      expectError(
        await call('GET', '/api/group/requests/alice?identifier=120363000000000997@g.us'),
        404,
        'Group not found or you are not a member of this group',
      );
    });

    it("replyPrivate answers a group message in its author's private chat, quoting it", async () => {
      const fromBob = await call('POST', '/api/message/text/bob', { number: group, message: 'who sells?' }, bob);
      expectOk(fromBob);
      const id = fromBob.body.data.messageId as string;
      await exchanged(aliceEvents, id);
      const res = await call('POST', '/api/message/text/alice', {
        number: group,
        message: 'me, in private',
        replyTo: id,
        replyPrivate: true,
      });
      expectOk(res);
      expect(res.body.data).to.deep.include({ to: BOB_JID, replyTo: id });
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ text: 'me, in private', replyTo: id });
    });

    it('media takes mention in a group', async () => {
      const res = await call('POST', '/api/message/media/alice', {
        number: group,
        mediaType: 'image',
        mediaUrl: server.url('/photo.png'),
        message: `@${BOB} look`,
        mention: [BOB],
      });
      expectOk(res);
      expect(res.body.data.mentions).to.deep.equal([BOB_JID]);
      const received = await exchanged(bobEvents, res.body.data.messageId);
      expect((received.data as any).message.mentions).to.deep.include(BOB_JID);
    });

    it('communities: create with name and groupJid[], link and unlink several, listSubGroups', async () => {
      const extra = await call('POST', '/api/group/create/alice', { name: 'Sellers', participants: [BOB] });
      const second = extra.body.jid as string;
      const created = await call('POST', '/api/community/create/alice', {
        name: 'Market',
        description: 'All of it',
        groupJid: [group],
      });
      expectOk(created);
      expect(created.body).to.deep.include({ isCommunity: true, linked: [group], failed: [] });
      const community = created.body.communityJid as string;

      const linked = await call('POST', '/api/community/link/alice', {
        communityJid: community,
        groupJid: [second, '120363000000000999@g.us'],
      });
      expect(linked.body).to.deep.include({ success: true, message: 'Linked 1 of 2 groups to community' });
      expect(linked.body.linked).to.deep.equal([second]);
      expect(linked.body.failed.map((f: any) => f.groupJid)).to.deep.equal(['120363000000000999@g.us']);

      const subs = await call('GET', `/api/community/listSubGroups/alice?communityJid=${community}`);
      expectOk(subs);
      expect(subs.body.message).to.equal('2 subgroup(s) found');
      expect(subs.body.subgroups.map((s: any) => s.jid)).to.have.members([group, second]);
      expect(subs.body.subgroups[0]).to.have.keys('jid', 'name', 'isDefaultSubGroup');

      const unlinked = await call('POST', '/api/community/unlink/alice', {
        communityJid: community,
        groupJid: [second],
      });
      expect(unlinked.body).to.deep.include({ message: 'Unlinked 1 of 1 groups from community', linked: [second] });
      expectError(
        await call('GET', '/api/community/listSubGroups/alice?communityJid=120363000000000998@g.us'),
        404,
        'Community not found',
      );
    });
  });

  describe('channels, profile, instance', () => {
    it('newsletter: info, join and DELETE leave take identifier', async () => {
      const created = await call('POST', '/api/newsletter/create/alice', { name: 'Alice Daily' });
      expectOk(created);
      const jid = created.body.channel.jid as string;
      const joined = await call('POST', '/api/newsletter/join/bob', { identifier: jid }, bob);
      expectOk(joined);
      expect(joined.body).to.deep.include({ channelJid: jid });
      const info = await call('GET', `/api/newsletter/info/bob?identifier=${jid}`, undefined, bob);
      expectOk(info);
      expect(info.body.message).to.equal('Newsletter info retrieved');
      expect(info.body.channel).to.deep.include({ jid, name: 'Alice Daily', state: 'active' });
      expect(info.body.channel).to.have.property('subscriberCount');
      const left = await call('DELETE', `/api/newsletter/leave/bob?identifier=${jid}`, undefined, bob);
      expectOk(left);
      expect(left.body).to.deep.include({ message: 'Successfully left newsletter', channelJid: jid });
    });

    it('GET /api/profile/privacy is getPrivacy', async () => {
      const a = await call('GET', '/api/profile/privacy/alice');
      const b = await call('GET', '/api/profile/getPrivacy/alice');
      expectOk(a);
      expect(a.body).to.deep.equal(b.body);
    });

    it('reconnect: status connecting (or connected); 400 without a saved session; logout answers status', async () => {
      const res = await call('POST', '/api/instance/reconnect/alice');
      expectOk(res);
      expect(res.body.message).to.equal('Reconnect initiated');
      expect(res.body.status).to.be.oneOf(['connecting', 'connected']);
      const idle = await n.idle('never-linked');
      expectError(
        await call('POST', '/api/instance/reconnect/never-linked', undefined, idle),
        400,
        'Instance has no saved session — call /connect first',
      );
      const qr = await call('GET', '/api/instance/connect/never-linked', undefined, idle);
      expect(qr.body).to.include({ message: 'QR code generated', status: 'qr' });
    });

    it('connect takes ?history=N days: the new link asks the phone for them; not a whole number is a 400', async () => {
      const token = await n.idle('with-history');
      for (const bad of ['-1', '2.5', 'week']) {
        const res = await call('GET', `/api/instance/connect/with-history?history=${bad}`, undefined, token);
        expect(res.status, bad).to.equal(400);
        expect(res.body.error.message).to.contain('history must be a whole number of days, 0 or more');
      }
      const qr = await call('GET', '/api/instance/connect/with-history?history=7', undefined, token);
      expect(qr.body).to.include({ message: 'QR code generated', status: 'qr' });
      expectOk(await n.node.api.post('/api/sandbox/link/with-history', { number: '5511850000077' }, { token }));
      const asked = (await n.outbox('with-history', token)).filter((e) => e.type === 'history_sync');
      expect(asked.map((e) => e.operation)).to.deep.equal([{ name: 'historySync', days: 7 }]);
      // Already linked: the days are no longer asked for (history syncs on the first link only).
      expectOk(await call('GET', '/api/instance/connect/with-history?history=3', undefined, token));
      expect((await n.outbox('with-history', token)).filter((e) => e.type === 'history_sync')).to.have.length(1);
    });

    it('create answers the chatwoot block under its hosted name', async () => {
      const res = await n.node.api.post('/api/instance/new', { name: 'with-blocks' }, { token: n.account });
      expect(res.status).to.equal(201);
      expect(res.body.chatwoot).to.deep.equal(res.body.helpdesk);
      const deleted = await n.node.api.delete('/api/instance/delete/with-blocks', { token: n.account });
      expect(deleted.body).to.deep.include({
        message: 'Instance deleted',
        instance: { name: 'with-blocks', status: 'deleted' },
      });
    });
  });

  describe('calls', () => {
    const callStatuses = (events: EventEnvelope[], callId: string) =>
      events
        .filter((e) => e.event === 'call.update' && (e.data as { callId: string }).callId === callId)
        .map((e) => (e.data as { status: string }).status);

    it('POST /api/call/audio rings; answered, the file plays, then the call hangs up', async () => {
      const res = await call('POST', '/api/call/audio/alice', {
        number: BOB,
        mediaBase64: wavTone(1).toString('base64'),
      });
      expectOk(res);
      expect(res.body).to.deep.include({ success: true, message: 'Audio call placed', number: BOB });
      const callId = res.body.callId as string;
      expect(callId).to.be.a('string').and.not.empty;
      await until(() => callStatuses(bobEvents, callId).includes('offer'), 'the offer on bob', 15_000);
      const offered = (await n.outbox('alice', alice, BOB)).at(-1);
      expect(offered).to.deep.include({ type: 'call_offer' });
      expect(offered.call.callId).to.equal(callId);
      expect(offered.media).to.include({ kind: 'audio', mimetype: 'audio/ogg; codecs=opus', seconds: 1 });

      const answered = await n.node.api.post('/api/sandbox/answerCall/bob', { callId }, { token: bob });
      expectOk(answered);
      expect(answered.body).to.deep.include({ callId, from: ALICE_JID });
      await until(() => callStatuses(bobEvents, callId).includes('terminated'), 'the hang-up on bob', 15_000);
      expect(callStatuses(bobEvents, callId)).to.deep.equal(['offer', 'accepted', 'terminated']);
      const played = (await n.outbox('alice', alice, BOB)).find((e: any) => e.type === 'call_audio');
      expect(played).to.deep.include({ call: { callId, durationSeconds: 1 } });
      await until(() => callStatuses(aliceEvents, callId).includes('terminated'), 'the hang-up on alice', 15_000);
      expect(callStatuses(aliceEvents, callId)).to.deep.equal(['accepted', 'terminated']);
      expectError(
        await n.node.api.post('/api/sandbox/answerCall/bob', { callId }, { token: bob }),
        404,
        'Call not found',
      );
    });

    it('POST /api/call/audio: mediaUrl is a URL or a data URI; both, neither, no number or no audio is a 400', async () => {
      server.serve('/tone.wav', wavTone(1), 'audio/wav');
      const byUrl = await call('POST', '/api/call/audio/alice', { number: BOB, mediaUrl: server.url('/tone.wav') });
      expectOk(byUrl);
      const dataUri = `data:audio/wav;base64,${wavTone(1).toString('base64')}`;
      expectOk(await call('POST', '/api/call/audio/alice', { number: BOB, mediaUrl: dataUri }));
      const exactlyOne = 'Invalid request body: send exactly one of mediaUrl or mediaBase64';
      expectError(
        await call('POST', '/api/call/audio/alice', { number: BOB, mediaUrl: dataUri, mediaBase64: dataUri }),
        400,
        exactlyOne,
      );
      expectError(await call('POST', '/api/call/audio/alice', { number: BOB }), 400, exactlyOne);
      expectError(await call('POST', '/api/call/audio/alice', { mediaUrl: dataUri }), 400, 'Number is required');
      const image = await call('POST', '/api/call/audio/alice', {
        number: BOB,
        mediaBase64: (await pngImage(8, 8)).toString('base64'),
      });
      expect(image.status).to.equal(400);
      expect(image.body.error.message).to.match(/^The media is not playable audio/);
      expectError(
        await call('POST', '/api/call/audio/alice', { number: BOB, mediaBase64: 'not base64!' }),
        400,
        'Invalid request body: mediaBase64 is not valid base64',
      );
    });
  });
});
