import { expect } from 'chai';
import type { GroupMetadata } from '@whiskeysockets/baileys';
import {
  ForbiddenError,
  NotConnectedError,
  NotFoundError,
  TimeoutError,
  ValidationError,
} from '../../../src/errors.js';
import { CHANNEL_PREFIX } from '../../../src/msgnet/baileys/baileys-channels.js';
import { boom, OWN_JID } from '../../helpers/baileys/fake-baileys-socket.js';
import type { FakeSocket } from '../../helpers/baileys/fake-baileys-socket.js';
import { connectedSession, openSession } from '../../helpers/baileys/baileys-harness.js';
import type { Harness } from '../../helpers/baileys/baileys-harness.js';

const CHANNEL = '120363111111111111@newsletter';
const COMMUNITY = '120363000000000099@g.us';
const GROUP = '120363000000000001@g.us';

/** A channel as rc14's `newsletterMetadata` answers it: the server's raw object. */
function rawChannel(id: string, role: string, extra: Record<string, unknown> = {}) {
  return {
    id,
    state: { type: 'ACTIVE' },
    thread_metadata: {
      name: { text: 'Daily news', id: '1', update_time: '0' },
      description: { text: 'Every morning', id: '2', update_time: '0' },
      invite: 'AbCdEf',
      subscribers_count: '42',
      picture: { direct_path: '/v/t61/pic.jpg', id: '3', type: 'IMAGE' },
      ...extra,
    },
    viewer_metadata: { mute: 'OFF', role },
  };
}

async function rejected(work: Promise<unknown>): Promise<unknown> {
  try {
    await work;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('baileys driver: channels and communities through the socket', () => {
  let h: Harness;
  let sock: FakeSocket;

  beforeEach(async () => {
    h = await connectedSession();
    sock = h.factory.last;
  });

  afterEach(async () => {
    await h.session.close();
  });

  describe('channels', () => {
    it('create: newsletterCreate, remembered as owned; a picture is set as the JPEG given, then read back', async () => {
      const plain = await h.session.channels.create('Alice News', 'Daily');
      expect(sock.callsOf('newsletterCreate')).to.deep.equal([['Alice News', 'Daily']]);
      expect(plain).to.deep.equal({
        jid: plain.jid,
        name: 'Alice News',
        description: 'Daily',
        pictureUrl: null,
        subscribers: 0,
        role: 'owner',
        inviteLink: 'https://whatsapp.com/channel/INV1TE',
      });
      expect(h.store.data.get(`${CHANNEL_PREFIX}${plain.jid}`)).to.equal('owner');
      expect(sock.callsOf('newsletterUpdate')).to.deep.equal([]);

      const jpeg = Buffer.from('jpeg-bytes');
      sock.newsletters.set('120363000000000002@newsletter', rawChannel('120363000000000002@newsletter', 'OWNER'));
      const pictured = await h.session.channels.create('With picture', undefined, jpeg);
      expect(sock.callsOf('newsletterUpdate')).to.deep.equal([[pictured.jid, { picture: jpeg.toString('base64') }]]);
      expect(pictured.pictureUrl).to.match(/^https:\/\/pps\.whatsapp\.net\//);
    });

    it('info: the raw metadata mapped (name, counts, picture, invite, role); unknown is 404, a bad JID 400', async () => {
      sock.newsletters.set(CHANNEL, rawChannel(CHANNEL, 'SUBSCRIBER'));
      expect(await h.session.channels.info(CHANNEL)).to.deep.equal({
        jid: CHANNEL,
        name: 'Daily news',
        description: 'Every morning',
        pictureUrl: 'https://pps.whatsapp.net/v/t61/pic.jpg',
        subscribers: 42,
        role: 'follower',
        inviteLink: 'https://whatsapp.com/channel/AbCdEf',
      });
      expect(sock.callsOf('newsletterMetadata')).to.deep.equal([['jid', CHANNEL]]);
      expect(await rejected(h.session.channels.info('120363000000000404@newsletter'))).to.be.instanceOf(NotFoundError);
      expect(await rejected(h.session.channels.info('5511999990000@s.whatsapp.net'))).to.be.instanceOf(ValidationError);
      expect(sock.callsOf('newsletterMetadata')).to.have.length(2);
    });

    it('follow and unfollow: the queries, and the channels list the session can know', async () => {
      sock.newsletters.set(CHANNEL, rawChannel(CHANNEL, 'SUBSCRIBER'));
      const owned = await h.session.channels.create('Mine');
      await h.session.channels.follow(CHANNEL);
      expect(sock.callsOf('newsletterFollow')).to.deep.equal([[CHANNEL]]);
      expect(h.store.data.get(`${CHANNEL_PREFIX}${CHANNEL}`)).to.equal('follower');
      const listed = await h.session.channels.list();
      expect(listed.map((c) => [c.jid, c.role])).to.have.deep.members([
        [owned.jid, 'owner'],
        [CHANNEL, 'follower'],
      ]);
      // Left from the phone (a guest now): no longer listed.
      sock.newsletters.set(CHANNEL, rawChannel(CHANNEL, 'GUEST'));
      expect((await h.session.channels.list()).map((c) => c.jid)).to.deep.equal([owned.jid]);

      await h.session.channels.unfollow(CHANNEL);
      expect(sock.callsOf('newsletterUnfollow')).to.deep.equal([[CHANNEL]]);
      expect(h.store.data.has(`${CHANNEL_PREFIX}${CHANNEL}`)).to.equal(false);
    });

    it('publish: a text or a media with its caption by sendMessage; only an owner or admin publishes', async () => {
      const mine = await h.session.channels.create('Mine');
      const sent = await h.session.channels.publish(mine.jid, { text: 'Hello' });
      expect(sent.messageId).to.match(/^SENT/);
      const image = Buffer.from('jpeg');
      await h.session.channels.publish(mine.jid, {
        text: 'A photo',
        media: { kind: 'image', data: image, mimetype: 'image/jpeg' },
      });
      expect(sock.callsOf('sendMessage').map(([jid, content]) => [jid, content])).to.deep.equal([
        [mine.jid, { text: 'Hello' }],
        [mine.jid, { image, mimetype: 'image/jpeg', caption: 'A photo' }],
      ]);

      sock.newsletters.set(CHANNEL, rawChannel(CHANNEL, 'ADMIN'));
      await h.session.channels.publish(CHANNEL, { text: 'As admin' });
      sock.newsletters.set(CHANNEL, rawChannel(CHANNEL, 'SUBSCRIBER'));
      const refused = await rejected(h.session.channels.publish(CHANNEL, { text: 'Not mine' }));
      expect(refused).to.be.instanceOf(ForbiddenError);
      expect((refused as Error).message).to.equal("Only the channel's owner can publish");
      expect(sock.callsOf('sendMessage')).to.have.length(3);
    });

    it("the server's refusals are typed: 403 forbidden, 404 not found, a timeout", async () => {
      sock.refusals.set('newsletterFollow', boom(403, 'not-authorized'));
      expect(await rejected(h.session.channels.follow(CHANNEL))).to.be.instanceOf(ForbiddenError);
      sock.refusals.set('newsletterUnfollow', boom(404, 'item-not-found'));
      expect(await rejected(h.session.channels.unfollow(CHANNEL))).to.be.instanceOf(NotFoundError);
      sock.refusals.set('newsletterMetadata', new Error('Timed Out'));
      expect(await rejected(h.session.channels.info(CHANNEL))).to.be.instanceOf(TimeoutError);
      expect(h.store.data.has(`${CHANNEL_PREFIX}${CHANNEL}`)).to.equal(false);
    });
  });

  describe('communities', () => {
    it('create: communityCreate, with the groups WhatsApp made with it', async () => {
      sock.groups = {
        [GROUP]: { id: GROUP, subject: 'Announcements', owner: OWN_JID, participants: [], linkedParent: COMMUNITY },
      };
      const created = await h.session.communities.create('Neighbours', 'Our street');
      expect(sock.callsOf('communityCreate')).to.deep.equal([['Neighbours', 'Our street']]);
      expect(created).to.deep.equal({
        jid: COMMUNITY,
        subject: 'Neighbours',
        description: 'Our street',
        groups: [{ jid: GROUP, subject: 'Announcements' }],
        joinApproval: false,
      });
      expect(sock.callsOf('communityJoinApprovalMode')).to.deep.equal([]);
      await h.session.communities.create('Bare');
      expect(sock.callsOf('communityCreate')[1]).to.deep.equal(['Bare', '']);
    });

    it('create with joinApproval: membership approval turned on right after the community exists', async () => {
      const created = await h.session.communities.create('Gated', undefined, { joinApproval: true });
      expect(sock.callsOf('communityJoinApprovalMode')).to.deep.equal([[created.jid, 'on']]);
      expect(created.joinApproval).to.equal(true);
    });

    it('list: the parents among the groups this number is in, each with the groups linked to it', async () => {
      const group = (id: string, subject: string, extra: Partial<GroupMetadata> = {}): GroupMetadata => ({
        id,
        subject,
        owner: OWN_JID,
        participants: [],
        ...extra,
      });
      sock.groups = {
        [COMMUNITY]: group(COMMUNITY, 'Neighbours', { isCommunity: true, desc: 'Our street' }),
        [GROUP]: group(GROUP, 'Announcements', { linkedParent: COMMUNITY, isCommunityAnnounce: true }),
        '120363000000000003@g.us': group('120363000000000003@g.us', 'Unlinked'),
      };
      expect(await h.session.communities.list()).to.deep.equal([
        {
          jid: COMMUNITY,
          subject: 'Neighbours',
          description: 'Our street',
          groups: [{ jid: GROUP, subject: 'Announcements' }],
          joinApproval: false,
        },
      ]);
      // What the list read is kept: a message in the community's parent group now says so.
      sock.emit('messages.upsert', {
        type: 'notify',
        messages: [COMMUNITY, GROUP].map((remoteJid, i) => ({
          key: { remoteJid, id: `CM${i}`, fromMe: false, participant: '5511988887777@s.whatsapp.net' },
          message: { conversation: 'hi' },
        })),
      });
      const chats = h.events.flatMap((e) => (e.type === 'message' ? [e.message.chat] : []));
      expect(chats.map((c) => [c.jid, c.isCommunity])).to.deep.equal([
        [COMMUNITY, true],
        [GROUP, undefined],
      ]);
    });

    it('link and unlink: the group first, then its community, as Baileys takes them; refusals typed', async () => {
      await h.session.communities.linkGroup(COMMUNITY, GROUP);
      await h.session.communities.unlinkGroup(COMMUNITY, GROUP);
      expect(sock.callsOf('communityLinkGroup')).to.deep.equal([[GROUP, COMMUNITY]]);
      expect(sock.callsOf('communityUnlinkGroup')).to.deep.equal([[GROUP, COMMUNITY]]);
      sock.refusals.set('communityLinkGroup', boom(403, 'forbidden'));
      expect(await rejected(h.session.communities.linkGroup(COMMUNITY, GROUP))).to.be.instanceOf(ForbiddenError);
    });
  });

  it('a session that is not connected refuses every operation', async () => {
    const offline = await openSession();
    try {
      for (const work of [
        offline.session.channels.list(),
        offline.session.channels.follow(CHANNEL),
        offline.session.communities.list(),
        offline.session.communities.create('x'),
      ]) {
        expect(await rejected(work)).to.be.instanceOf(NotConnectedError);
      }
    } finally {
      await offline.session.close();
    }
  });
});
