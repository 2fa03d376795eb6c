import { expect } from 'chai';
import WebSocket from 'ws';
import { FakeChatwoot } from '../helpers/fake-chatwoot.js';
import { pngImage, startFileServer, wavTone } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { until } from '../helpers/until.js';
import { SETTINGS_FIELDS } from '../integration/support.js';
import { ClusterFixture, connectAndLink } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';
import type { NodeProcess } from './node-process.js';

const SHOP = '5511860000001';
const BUYER = '5511860000002';
const THIRD = '5511860000003';
const SHOP_JID = `${SHOP}@s.whatsapp.net`;
const BUYER_JID = `${BUYER}@s.whatsapp.net`;
const THIRD_JID = `${THIRD}@s.whatsapp.net`;

type Answer = Awaited<ReturnType<NodeProcess['api']['request']>>;

/** A success: the status and the hosted envelope's `success: true` (the Chatwoot module has no envelope). */
function ok(res: Answer, status = 200): any {
  expect(res.status, `${res.status} ${res.text}`).to.equal(status);
  return res.body;
}

/**
 * Every route of the hosted product's catalog (82, its appendix A), each sent with the body its
 * documentation shows to a node that does not own the instance, in sandbox mode: the answer's documented
 * fields come back from the owner through the router.
 */
describe("cluster: every route of the hosted product's catalog through a node that does not own the instance", function () {
  this.timeout(180_000);
  let c: ClusterFixture;
  let chatwoot: FakeChatwoot;
  let files: FileServer;
  let account: string;
  const tokens: Record<string, string> = {};
  const ids: Record<string, string> = {};

  /** A node that does not own the instance now (asked of Redis before every call). */
  async function front(name: string): Promise<NodeProcess> {
    const [owner] = await c.owners([ids[name]!]);
    return c.nodes.find((n) => n.nodeId !== owner)!;
  }

  /** A call on an instance's route, through a node that does not own it, with the instance's token. */
  async function call(method: string, path: string, body?: unknown, name = 'shop'): Promise<Answer> {
    return (await front(name)).api.request(method, path, body, { token: tokens[name]! });
  }

  /** A message from `from` to `to`'s number, sent the way a contact would (the sandbox network). */
  async function inbound(to: string, body: Record<string, unknown>): Promise<string> {
    return ok(await call('POST', `/api/sandbox/inbound/${to}`, body, to)).messageId as string;
  }

  before(async function () {
    this.timeout(90_000);
    [chatwoot, files] = await Promise.all([FakeChatwoot.start(), startFileServer()]);
    files.serve('/photo.png', await pngImage(120, 80), 'image/png');
    files.serve('/tone.wav', wavTone(1), 'audio/wav');
    c = await ClusterFixture.start(2, {
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '1000',
      ALLOW_PRIVATE_URLS: 'true',
    });
    const created = await c.nodes[0]!.api.post(
      '/api/admin/accounts',
      { name: 'catalog' },
      { token: CLUSTER_ADMIN_TOKEN },
    );
    account = created.body.account.token as string;
    for (const [name, number] of [
      ['shop', SHOP],
      ['buyer', BUYER],
      ['third', THIRD],
    ] as const) {
      // 1. POST /api/instance/new (TokenAccount), with inline settings and a websocket block.
      const res = await c.nodes[0]!.api.post(
        '/api/instance/new',
        { name, autoRejectCalls: false, websocketEnabled: true, websocketEvents: ['message.exchange'] },
        { token: account },
      );
      const body = ok(res, 201);
      expect(body.instance).to.include({ name });
      tokens[name] = body.instance.token as string;
      // 3. GET /api/instance/connect/:instance, then the phone scans (the sandbox's link).
      await connectAndLink(c.nodes[1]!.api, c.nodes[0]!.api, name, tokens[name], { number });
    }
    const accountId = (await c.store.accounts.findByName('catalog'))!.id;
    for (const i of await c.store.instances.listByAccount(accountId)) ids[i.name] = i.id;
  });

  after(async () => {
    await Promise.all([c?.stop(), chatwoot?.stop(), files?.close()]);
  });

  describe('instance', () => {
    it('list (2), getSettings and settings (7, 8), getProxy and proxy (9, 10), getS3 and s3 (11, 12)', async () => {
      const list = ok(await (await front('shop')).api.get('/api/instance/list?instanceName=shop', { token: account }));
      expect(list).to.deep.include({ success: true, message: '1 Instance found', status: 'connected' });
      expect(list.instances[0]).to.deep.include({ name: 'shop', token: tokens.shop, status: 'connected' });
      expect(list.instances[0].connection).to.include({ state: 'connected', numberJid: SHOP_JID });
      expect(list.instances[0].profile).to.include.keys('name', 'pictureUrl', 'isBusiness', 'businessName');
      expect(list.instances[0].websocket).to.deep.include({ enabled: true, events: ['message.exchange'] });

      const settings = ok(await call('GET', '/api/instance/getSettings/shop'));
      expect(settings.message).to.equal('Settings retrieved successfully');
      expect(settings.settings).to.include.keys(...SETTINGS_FIELDS);
      const updated = ok(await call('POST', '/api/instance/settings/shop', { ignoreStatus: true }));
      expect(updated.message).to.equal('Settings updated successfully');
      expect(updated.settings).to.include({ ignoreStatus: true, autoRejectCalls: false });

      ok(
        await call('POST', '/api/instance/proxy/shop', {
          enabled: true,
          host: 'proxy.example.com',
          port: '1080',
          protocol: 'socks5',
          username: 'u',
          password: 'p',
        }),
      );
      const proxy = ok(await call('GET', '/api/instance/getProxy/shop'));
      expect(proxy.proxy).to.include({ enabled: true, host: 'proxy.example.com', protocol: 'socks5' });
      expect(JSON.stringify(proxy)).not.to.include('"p"');
      ok(await call('POST', '/api/instance/proxy/shop', { enabled: false }));

      const s3 = ok(
        await call('POST', '/api/instance/s3/shop', {
          enabled: true,
          region: 'us-east-1',
          bucket: 'media',
          accessKey: 'AKIA',
          secretKey: 'secret-of-s3',
          endpoint: '',
          pathPrefix: 'shop/',
        }),
      );
      expect(s3.message).to.equal('S3 configuration updated');
      expect(s3.s3).to.include({ enabled: true, region: 'us-east-1', bucket: 'media', accessKey: 'AKIA' });
      const readS3 = ok(await call('GET', '/api/instance/getS3/shop'));
      expect(readS3.s3).to.include({ enabled: true, bucket: 'media', pathPrefix: 'shop/', secretKey: null });
      expect(JSON.stringify(readS3)).not.to.include('secret-of-s3');
      ok(await call('POST', '/api/instance/s3/shop', { enabled: false }));
    });
  });

  describe('messages', () => {
    it('text (13) with delay in seconds, media (14), sticker (15), location (16), contact (17)', async () => {
      const started = Date.now();
      const text = ok(await call('POST', '/api/message/text/shop', { number: BUYER, message: 'hello', delay: 1 }));
      expect(Date.now() - started).to.be.at.least(1000);
      expect(text.data).to.deep.include({
        direction: 'outgoing',
        messageType: 'text',
        content: 'hello',
        chat: { jid: BUYER_JID, isGroup: false },
      });
      expect(text.data.messageId).to.be.a('string');

      const media = ok(
        await call('POST', '/api/message/media/shop', {
          number: BUYER,
          mediaType: 'image',
          mediaUrl: files.url('/photo.png'),
          message: 'look',
        }),
      );
      expect(media.data).to.include({ messageType: 'image', mediaMimeType: 'image/jpeg' });
      expect(media.data.mediaSize).to.be.above(0);

      const sticker = ok(
        await call('POST', '/api/message/sticker/shop', { number: BUYER, imageUrl: files.url('/photo.png') }),
      );
      expect(sticker.data).to.include({ messageType: 'sticker', mediaMimeType: 'image/webp' });

      const location = ok(
        await call('POST', '/api/message/location/shop', {
          number: BUYER,
          latitude: -23.5505,
          longitude: -46.6333,
          name: 'Store',
          address: 'Av. Paulista, 1000',
        }),
      );
      expect(location.data.messageType).to.equal('location');
      expect(location.data.content).to.include('📍 Store').and.include('Av. Paulista, 1000');

      const contacts = ok(
        await call('POST', '/api/message/contact/shop', {
          number: BUYER,
          vcard: [
            { fullName: 'Ana', phone: '5511900000011' },
            { fullName: 'Bia', phone: '5511900000012', organization: 'Shop' },
          ],
        }),
      );
      expect(contacts.message).to.equal('2 contacts sent successfully in one message');
    });

    it('reaction (18) and its removal, poll (19), carousel (20), button (21), list (22), form (23), pix (24), status (25)', async () => {
      const target = await inbound('shop', { from: BUYER, text: 'react to me' });
      const reacted = ok(
        await call('POST', '/api/message/reaction/shop', { number: BUYER, messageId: target, reaction: '👍' }),
      );
      expect(reacted.data.replyTo).to.deep.include({ messageId: target });
      const removed = ok(
        await call('POST', '/api/message/reaction/shop', { number: BUYER, messageId: target, reaction: 'remove' }),
      );
      expect(removed.message).to.equal('Reaction removed successfully');

      const poll = ok(
        await call('POST', '/api/message/poll/shop', {
          number: BUYER,
          question: 'Colour?',
          options: ['Red', 'Blue'],
          maxAnswer: 5,
        }),
      );
      expect(poll.data.messageId).to.be.a('string');

      const carousel = ok(
        await call('POST', '/api/message/carousel/shop', {
          number: BUYER,
          message: 'Our picks',
          footer: 'Shop',
          cards: [
            {
              header: { title: 'Mug', imageUrl: files.url('/photo.png') },
              body: { text: 'A mug' },
              buttons: [{ displayText: 'Buy', id: 'buy-mug', type: 'REPLY' }],
            },
          ],
        }),
      );
      expect(carousel.data).to.include({ messageType: 'interactive', content: 'Our picks - Carousel with 1 card(s)' });

      const button = ok(
        await call('POST', '/api/message/button/shop', {
          number: BUYER,
          contentText: 'Pick one',
          headerText: 'Menu',
          footerText: 'Shop',
          buttons: [
            { id: 'yes', displayText: 'Yes', type: 'REPLY' },
            { id: 'https://example.com', displayText: 'Site', type: 'URL' },
          ],
        }),
      );
      expect(button.data).to.include({ messageType: 'buttons', content: 'Pick one' });

      ok(
        await call('POST', '/api/message/list/shop', {
          number: BUYER,
          contentText: 'Our menu',
          buttonText: 'Open',
          sections: [{ title: 'Drinks', rows: [{ id: 'tea', title: 'Tea', description: 'Hot' }] }],
          footerText: 'Shop',
        }),
      );
      ok(
        await call('POST', '/api/message/form/shop', {
          number: BUYER,
          message: 'Your details',
          formType: 'contact_details',
          buttonLabel: 'Fill in',
          fullNameVisible: true,
          emailVisible: true,
        }),
      );
      ok(
        await call('POST', '/api/message/pix/shop', {
          number: BUYER,
          merchantName: 'Shop',
          pixKey: '12345678909',
          pixKeyType: 'CPF',
          message: 'Your order',
          items: [{ name: 'Mug', description: 'Blue', quantity: 2, unitPrice: 19.9 }],
        }),
      );
      const story = ok(
        await call('POST', '/api/message/status/shop', {
          type: 'text',
          message: 'Open today',
          backgroundColor: '#112233',
          font: 'serif',
        }),
      );
      expect(story.data).to.deep.include({ messageType: 'text' });
      expect(story.data.chat).to.include({ jid: 'status@broadcast' });
    });
  });

  describe('chats and labels', () => {
    it('contacts (26) with found for a stranger, getMessage (28), status (44), base64 (43), history (42)', async () => {
      await inbound('shop', { from: BUYER, text: 'hi', pushName: 'Buyer' });
      const book = ok(await call('GET', '/api/chat/contacts/shop'));
      expect(book.total).to.equal(book.contacts.length);
      expect(book.contacts.map((x: any) => x.jid)).to.include(BUYER_JID);
      const stranger = ok(await call('GET', '/api/chat/contacts/shop?number=5511860009999'));
      expect(stranger.contact).to.include({ found: false });

      const found = await inbound('shop', { from: BUYER, text: 'find me' });
      const message = ok(await call('GET', `/api/chat/getMessage/shop?messageId=${found}`));
      expect(message).to.deep.include({ message: 'Message found', messageId: found, status: 'found' });
      expect(message.data).to.include({ content: 'find me', type: 'text', from: BUYER_JID, isGroup: false });

      const status = ok(await call('GET', `/api/chat/status/shop?messageId=${found}`));
      expect(status).to.include({
        message: 'Message status retrieved successfully',
        message_id: found,
        status: 'received',
        status_code: 3,
        direction: 'received',
        chat_jid: BUYER_JID,
      });

      const image = await pngImage(16, 16);
      const withFile = await inbound('shop', {
        from: BUYER,
        media: { kind: 'image', mimetype: 'image/png', base64: image.toString('base64') },
      });
      const base64 = ok(await call('GET', `/api/chat/base64/shop?messageId=${withFile}`));
      expect(base64).to.include({
        message_id: withFile,
        mime_type: 'image/png',
        media_type: 'image',
        base64: image.toString('base64'),
      });

      const history = ok(await call('POST', '/api/chat/history/shop', { number: BUYER, count: 2 }));
      expect(history).to.include({ chat_jid: BUYER_JID, count: 2, hasMore: true });
      expect(history.messages.map((m: any) => m.id)).to.deep.equal([withFile, found]);
    });

    it('archive (34), markRead (35), markChatRead (36), pin (37), favorite (38), mute (39), block (40), presence (41)', async () => {
      const id = await inbound('shop', { from: THIRD, text: 'read me' });
      expect(ok(await call('POST', '/api/chat/archive/shop', { number: THIRD, archive: true }))).to.include({
        message: 'Chat archived successfully',
        chat_jid: THIRD_JID,
        archived: true,
      });
      expect(ok(await call('POST', '/api/chat/markRead/shop', { number: THIRD, messageId: id }))).to.include({
        message_id: id,
        chat_jid: THIRD_JID,
      });
      expect(ok(await call('POST', '/api/chat/markChatRead/shop', { number: THIRD, read: false }))).to.include({
        message: 'Chat marked as unread successfully',
        chat_jid: THIRD_JID,
        read: false,
      });
      expect(ok(await call('POST', '/api/chat/pin/shop', { number: THIRD, pin: true }))).to.include({
        message: 'Chat pinned successfully',
        chat_jid: THIRD_JID,
        pinned: true,
      });
      expect(ok(await call('POST', '/api/chat/favorite/shop', { messageId: id, favorite: true }))).to.include({
        type: 'message',
        chat_jid: THIRD_JID,
        message_id: id,
        favorite: true,
      });
      expect(
        ok(await call('POST', '/api/chat/mute/shop', { number: THIRD, mute: true, duration: '1 week' })),
      ).to.include({ message: 'Chat muted for 1 week', muted: true, duration: 604800 });
      expect(ok(await call('POST', '/api/chat/block/shop', { number: THIRD, block: true }))).to.include({
        message: 'Contact blocked successfully',
        contact_jid: THIRD_JID,
        blocked: true,
        blocked_count: 1,
      });
      ok(await call('POST', '/api/chat/block/shop', { number: THIRD, block: false }));
      ok(await call('POST', '/api/chat/presence/shop', { number: THIRD, state: 'Recording', duration: 1 }));
    });

    it('poll (45), forward (46), edit (47), delete (48), deleteChat (49)', async () => {
      const poll = ok(
        await call('POST', '/api/message/poll/shop', { number: BUYER, question: 'Size?', options: ['S', 'M'] }),
      );
      const pollId = poll.data.messageId as string;
      await inbound('shop', { from: BUYER, pollVote: { pollId, options: ['M'] } });
      const tally = ok(await call('GET', `/api/chat/poll/shop?messageId=${pollId}`));
      expect(tally.message).to.equal('Poll votes retrieved successfully');
      expect(tally.data).to.deep.include({
        messageId: pollId,
        name: 'Size?',
        votes: [
          { optionName: 'S', optionVoteCount: 0 },
          { optionName: 'M', optionVoteCount: 1 },
        ],
      });

      const draft = ok(await call('POST', '/api/message/text/shop', { number: BUYER, message: 'draft' }));
      const id = draft.data.messageId as string;
      expect(ok(await call('POST', '/api/chat/edit/shop', { messageId: id, content: 'final' }))).to.include({
        message: 'Message edited successfully',
        messageId: id,
        chatJid: BUYER_JID,
        oldContent: 'draft',
        newContent: 'final',
      });
      const forwarded = ok(await call('POST', '/api/chat/forward/shop', { messageId: id, to: THIRD }));
      expect(forwarded).to.include({
        message: 'Message forwarded successfully',
        originalId: id,
        destinationJid: THIRD_JID,
      });
      expect(ok(await call('DELETE', '/api/chat/delete/shop', { messageId: id, deleteForEveryone: true }))).to.include({
        delete_type: 'revoke',
      });
      expect(ok(await call('DELETE', '/api/chat/deleteChat/shop', { number: THIRD, deleteMedia: true }))).to.include({
        message: 'Chat deleted successfully (including media)',
        chat_jid: THIRD_JID,
        delete_media: true,
      });
    });

    it('tag list, create, delete (29 to 31), assignTag and its removal (32, 33), contactsByLabel (27)', async () => {
      const created = ok(await call('POST', '/api/chat/tag/shop', { name: 'VIP', color: 4 }));
      expect(created.message).to.equal('Tag created successfully');
      expect(created.tag).to.include({ name: 'VIP', color: 4, type: 'CUSTOM', deleted: false });
      const tagId = created.tag.id as string;
      const listed = ok(await call('GET', '/api/chat/tag/shop'));
      expect(listed).to.include({ message: 'Tags retrieved successfully', total: listed.tags.length });
      expect(listed.tags.map((t: any) => t.id)).to.include(tagId);

      expect(ok(await call('POST', '/api/chat/assignTag/shop', { number: BUYER, tagId }))).to.include({
        message: 'Tag assigned successfully',
        tag_id: tagId,
      });
      const byLabel = ok(await call('GET', `/api/chat/contactsByLabel/shop?labelNames=vip`));
      expect(byLabel.chats).to.deep.equal([{ chat_jid: BUYER_JID, labels: [{ id: tagId, name: 'VIP' }] }]);
      expect(byLabel).to.include.keys('total_chats', 'total_rows', 'refreshed', 'filter_label_ids');
      expect(ok(await call('DELETE', `/api/chat/assignTag/shop?number=${BUYER}&tagId=${tagId}`))).to.include({
        message: 'Tag removed successfully',
        tag_id: tagId,
      });
      const deleted = ok(await call('DELETE', `/api/chat/tag/shop?tagId=${tagId}`));
      expect(deleted.tag).to.deep.equal({ id: tagId, name: '', color: 0, type: '', deleted: true });
    });
  });

  describe('groups, communities and channels', () => {
    let group: string;

    it('group create (50), list (51), info (52), update (53), participants (54), resetLink (56), requests (57)', async () => {
      const created = ok(
        await call('POST', '/api/group/create/shop', {
          name: 'Buyers',
          participants: [BUYER, THIRD],
          description: 'Our buyers',
          groupSettings: { membersCanSendMessages: true, requireAdminApproval: false },
        }),
      );
      group = created.jid as string;
      expect(created).to.include({ name: 'Buyers', createdBy: SHOP_JID, participantCount: 3 });
      expect(created).to.include.keys('inviteCode', 'inviteLink', 'participants', 'groupSettings');

      const list = ok(await call('GET', '/api/group/list/shop'));
      expect(JSON.stringify(list)).to.include(group);
      const info = ok(await call('GET', `/api/group/info/shop?identifier=${group}&participants=false`));
      expect(info).to.deep.include({ jid: group, name: 'Buyers', participants: [] });

      const renamed = ok(await call('PUT', '/api/group/update/shop', { identifier: group, name: 'Buyers 2' }));
      expect(renamed).to.include({ message: 'Group updated successfully: name', name: 'Buyers 2' });

      const promoted = ok(
        await call('POST', '/api/group/participants/shop', {
          action: 'promote',
          identifier: group,
          participants: [BUYER],
        }),
      );
      expect(promoted.participants).to.deep.equal([
        { jid: BUYER_JID, outcome: 'promoted', success: true, error: null },
      ]);

      const reset = ok(await call('POST', '/api/group/resetLink/shop', { identifier: group }));
      expect(reset).to.include({ message: 'Group invite link reset successfully', groupJid: group });
      expect(reset.inviteLink).to.match(/^https:\/\/chat\.whatsapp\.com\//);

      expect(ok(await call('GET', `/api/group/requests/shop?identifier=${group}`))).to.deep.include({
        message: '0 pending requests found',
        groupJid: group,
        requests: [],
        meta: { total: 0 },
      });

      // 58 then 55: third leaves, and joins again by the new link.
      expect(ok(await call('DELETE', `/api/group/leave/third?identifier=${group}`, undefined, 'third'))).to.include({
        message: 'Successfully left the group',
        groupJid: group,
      });
      const joined = ok(await call('POST', '/api/group/join/third', { identifier: reset.inviteLink }, 'third'));
      expect(joined).to.include({ groupJid: group, requiresApproval: false });
    });

    it('community create (59), link (60), listSubGroups (62), unlink (61)', async () => {
      const second = ok(await call('POST', '/api/group/create/shop', { name: 'Sellers', participants: [BUYER] }))
        .jid as string;
      const community = ok(
        await call('POST', '/api/community/create/shop', {
          name: 'Market',
          description: 'All of it',
          groupJid: [group],
        }),
      );
      expect(community).to.include({ isCommunity: true });
      const communityJid = community.communityJid as string;
      const linked = ok(await call('POST', '/api/community/link/shop', { communityJid, groupJid: [second] }));
      expect(linked).to.deep.include({ message: 'Linked 1 of 1 groups to community', linked: [second], failed: [] });
      const subs = ok(await call('GET', `/api/community/listSubGroups/shop?communityJid=${communityJid}`));
      expect(subs).to.include({ message: '2 subgroup(s) found', communityJid });
      expect(subs.subgroups.map((s: any) => s.jid)).to.have.members([group, second]);
      const unlinked = ok(await call('POST', '/api/community/unlink/shop', { communityJid, groupJid: [second] }));
      expect(unlinked).to.deep.include({ message: 'Unlinked 1 of 1 groups from community', linked: [second] });
    });

    it('newsletter create (63), list (64), info (65), join (66), leave (67)', async () => {
      const created = ok(await call('POST', '/api/newsletter/create/shop', { name: 'Shop news' }));
      const jid = created.channel.jid as string;
      expect(jid).to.match(/@newsletter$/);
      expect(JSON.stringify(ok(await call('GET', '/api/newsletter/list/shop')))).to.include(jid);
      expect(ok(await call('POST', '/api/newsletter/join/buyer', { identifier: jid }, 'buyer'))).to.include({
        channelJid: jid,
      });
      const info = ok(await call('GET', `/api/newsletter/info/buyer?identifier=${jid}`, undefined, 'buyer'));
      expect(info.message).to.equal('Newsletter info retrieved');
      expect(info.channel).to.include({ jid, name: 'Shop news', state: 'active' });
      expect(info.channel).to.have.property('subscriberCount');
      expect(ok(await call('DELETE', `/api/newsletter/leave/buyer?identifier=${jid}`, undefined, 'buyer'))).to.include({
        message: 'Successfully left newsletter',
        channelJid: jid,
      });
    });
  });

  describe('profile, events, Chatwoot, calls', () => {
    it('profile account (68), getAccount (69), getPrivacy (70), privacy read (71) and update (72)', async () => {
      const updated = ok(
        await call('POST', '/api/profile/account/shop', { profileName: 'The Shop', profileStatus: 'Open' }),
      );
      expect(updated.updatedFields).to.have.members(['profileName', 'profileStatus']);
      const mine = ok(await call('GET', '/api/profile/getAccount/shop'));
      expect(mine.profile).to.include({ profileName: 'The Shop', phoneNumber: SHOP, jid: SHOP_JID });
      expect(mine.profile).to.include.keys('profilePicture', 'profileStatus', 'lid');
      const privacy = ok(await call('GET', '/api/profile/getPrivacy/shop'));
      expect(privacy.message).to.equal('Privacy settings retrieved successfully');
      expect(privacy.settings).to.have.keys('visibility', 'privacy', 'permissions');
      expect(ok(await call('GET', '/api/profile/privacy/shop'))).to.deep.equal(privacy);
      const changed = ok(
        await call('POST', '/api/profile/privacy/shop', {
          visibility: { lastSeen: 'contacts' },
          privacy: { readReceipts: 'none' },
        }),
      );
      expect(changed.settings.visibility.lastSeen).to.equal('contacts');
      expect(changed.settings.privacy.readReceipts).to.equal('none');
    });

    it('webhook (73), getWebhook (74), websocket (75), getWebsocket (76) and /ws (77)', async () => {
      const hook = ok(
        await call('POST', '/api/events/webhook/shop', {
          label: 'crm',
          enabled: true,
          url: 'https://crm.example.com/hooks',
          authorization: 'Bearer svc-token-xyz',
          byEvents: true,
          events: ['message.exchange', 'message.status'],
          mediaBase64: false,
        }),
        201,
      );
      expect(hook.webhook).to.deep.include({ label: 'crm', enabled: true, url: 'https://crm.example.com/hooks' });
      const hooks = ok(await call('GET', '/api/events/getWebhook/shop'));
      expect(hooks.webhooks.map((w: any) => w.label)).to.include('crm');
      expect(ok(await call('GET', '/api/events/getWebhook/shop?label=crm')).webhook).to.include({
        authorization: 'Bearer svc-token-xyz',
        byEvents: true,
      });

      const ws = ok(
        await call('POST', '/api/events/websocket/shop', {
          enabled: true,
          events: ['message.exchange'],
          mediaBase64: false,
        }),
      );
      // include, not equal: our `base64` stays beside the catalog's `mediaBase64` (our older spelling, an alias).
      expect(ws.websocket).to.deep.include({ enabled: true, events: ['message.exchange'], mediaBase64: false });
      const readWs = ok(await call('GET', '/api/events/getWebsocket/shop'));
      expect(readWs.message).to.equal('WebSocket configuration retrieved');
      expect(readWs.websocket).to.deep.include({ enabled: true, events: ['message.exchange'], mediaBase64: false });

      const node = await front('shop');
      const socket = new WebSocket(`${node.url.replace(/^http/, 'ws')}/ws/shop?token=${tokens.shop}`);
      const frames: any[] = [];
      socket.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString('utf8'))));
      await new Promise<void>((resolve, reject) => {
        socket.once('open', () => resolve());
        socket.once('error', reject);
      });
      try {
        const id = await inbound('shop', { from: BUYER, text: 'over the socket' });
        await until(() => frames.find((f) => f.data?.id === id), 'the frame on the non-owner', 10_000);
        const frame = frames.find((f) => f.data?.id === id);
        expect(frame.event).to.equal('message.exchange');
        expect(frame.instanceData).to.include({ instance: 'shop', token: tokens.shop });
        expect(frame.data.message).to.deep.include({ direction: 'incoming', content: { text: 'over the socket' } });
      } finally {
        socket.close();
      }
    });

    it('Chatwoot set (78), list (79), delete (80): flat answers', async () => {
      const set = ok(
        await call(
          'POST',
          '/api/chatwoot/set/buyer',
          {
            chatwootBaseUrl: `${chatwoot.url}/`,
            chatwootAccountId: chatwoot.accountId,
            chatwootApiToken: chatwoot.token,
            inboxName: 'Buyer desk',
            signMessages: true,
            ignoreGroups: true,
          },
          'buyer',
        ),
        201,
      );
      expect(set).to.include({ instance: 'buyer', status: 'active', message: 'chatwoot integration activated' });
      const list = ok(await call('GET', '/api/chatwoot/list/buyer', undefined, 'buyer'));
      expect(list).to.include({
        instance_name: 'buyer',
        status: 'active',
        chatwoot_base_url: chatwoot.url,
        chatwoot_api_token: chatwoot.token,
        chatwoot_inbox_name: 'Buyer desk',
        sign_messages: true,
        ignore_groups: true,
        last_error: null,
      });
      expect(ok(await call('DELETE', '/api/chatwoot/delete/buyer', undefined, 'buyer'))).to.include({
        message: 'chatwoot integration deactivated',
      });
    });

    it('call fake (81) and audio (82)', async () => {
      const fake = ok(await call('POST', '/api/call/fake/shop', { number: BUYER, duration: 2 }));
      expect(fake).to.include({ message: 'Call placed successfully', number: BUYER, duration: 2 });
      expect(fake.callId).to.be.a('string');
      const audio = ok(await call('POST', '/api/call/audio/shop', { number: BUYER, mediaUrl: files.url('/tone.wav') }));
      expect(audio).to.include({ message: 'Audio call placed', number: BUYER });
      expect(audio.callId).to.be.a('string');
    });
  });

  describe('instance lifecycle', () => {
    it('reconnect (4), logout (5), delete (6)', async () => {
      const reconnect = ok(await call('POST', '/api/instance/reconnect/third', undefined, 'third'));
      expect(reconnect.message).to.equal('Reconnect initiated');
      expect(reconnect.status).to.be.oneOf(['connecting', 'connected']);
      await until(
        async () => ok(await call('GET', '/api/instance/list', undefined, 'third')).instances[0].status === 'connected',
        'third connected again',
        15_000,
      );
      const logout = ok(await call('DELETE', '/api/instance/logout/third', undefined, 'third'));
      expect(logout).to.deep.include({ message: 'Instance logged out' });
      expect(logout.instance).to.include({ status: 'loggedout' });
      const deleted = ok(await (await front('third')).api.delete('/api/instance/delete/third', { token: account }));
      expect(deleted).to.deep.include({ message: 'Instance deleted' });
      expect(deleted.instance).to.include({ status: 'deleted' });
    });
  });
});
