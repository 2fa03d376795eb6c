import { expect } from 'chai';
import type { BinaryNode, GroupMetadata, proto } from '@whiskeysockets/baileys';
import { ErrorCode } from '../../../src/errors.js';
import type { AppError } from '../../../src/errors.js';
import { paymentContent } from '../../../src/msgnet/baileys/interactive-content.js';
import { OWN_JID } from '../../helpers/baileys/fake-baileys-socket.js';
import { connectedSession } from '../../helpers/baileys/baileys-harness.js';

const PEER = '5511988887777@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

type Relayed = [string, proto.IMessage, { messageId: string; additionalNodes: BinaryNode[] }];

describe('BaileysSession: outgoing messages', () => {
  it('sendText: sendMessage with {text}; a bare number becomes a user jid', async () => {
    const h = await connectedSession();
    const sent = await h.session.messages.sendText('5511988887777', 'hello');
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([[PEER, { text: 'hello' }, undefined]]);
    expect(sent).to.deep.equal({ messageId: 'SENT1', timestamp: 1_700_000_000_000 });
  });

  it('a reply quotes its message: key and text; in a group the quoted author too', async () => {
    const h = await connectedSession();
    await h.session.messages.sendText(PEER, 'yes', {
      replyTo: { id: 'Q1', chatJid: PEER, fromMe: false, senderJid: PEER, text: 'open today?' },
    });
    const group = '120363000000000001@g.us';
    await h.session.messages.sendMedia(
      group,
      { kind: 'image', data: Buffer.from('x'), mimetype: 'image/jpeg' },
      {
        replyTo: { id: 'Q2', chatJid: group, fromMe: false, senderJid: PEER, text: 'photo?' },
        messageId: '3EB0AAAABBBBCCCCDDDD',
      },
    );
    const [first, second] = h.factory.last.callsOf('sendMessage').map((call) => call[2]);
    expect(first).to.deep.equal({
      quoted: { key: { remoteJid: PEER, id: 'Q1', fromMe: false }, message: { conversation: 'open today?' } },
    });
    expect(second).to.deep.equal({
      messageId: '3EB0AAAABBBBCCCCDDDD',
      quoted: {
        key: { remoteJid: group, id: 'Q2', fromMe: false, participant: PEER },
        message: { conversation: 'photo?' },
      },
    });
  });

  it('sendLocation: sendMessage with {location} in degrees, name and address', async () => {
    const h = await connectedSession();
    await h.session.messages.sendLocation(PEER, { latitude: -23.55, longitude: -46.63, name: 'Sé', address: 'SP' });
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [PEER, { location: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Sé', address: 'SP' } }, undefined],
    ]);
  });

  it('sendText with mentions: sendMessage with {text, mentions}', async () => {
    const h = await connectedSession();
    await h.session.messages.sendText(PEER, `hi @5511988887777`, { mentions: [PEER] });
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [PEER, { text: 'hi @5511988887777', mentions: [PEER] }, undefined],
    ]);
  });

  it('sendText with a link preview: the card as Baileys carries it, thumbnail as JPEG bytes', async () => {
    const h = await connectedSession();
    const thumbnail = Buffer.from([0xff, 0xd8, 0xff, 0xd9]);
    await h.session.messages.sendText(PEER, 'see https://shop.example/x', {
      linkPreview: { url: 'https://shop.example/x', title: 'Shop', thumbnail: thumbnail.toString('base64') },
    });
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [
        PEER,
        {
          text: 'see https://shop.example/x',
          linkPreview: {
            'canonical-url': 'https://shop.example/x',
            'matched-text': 'https://shop.example/x',
            title: 'Shop',
            jpegThumbnail: thumbnail,
          },
        },
        undefined,
      ],
    ]);
  });

  it('sendContent pix: the PIX card relayed as paymentContent builds it', async () => {
    const h = await connectedSession();
    const payment = { merchantName: 'Loja', key: '+5511999998888', keyType: 'PHONE' as const };
    await h.session.messages.sendContent(PEER, { kind: 'pix', payment }, { messageId: '3EB0PIX0000000000001' });
    const [viaContent] = h.factory.last.callsOf('relayMessage') as unknown as Relayed[];
    const strip = (m: proto.IMessage) => JSON.stringify(m).replace(/"reference_id\\":\\"[^\\]*\\"/, '');
    expect(viaContent![0]).to.equal(PEER);
    expect(viaContent![2].messageId).to.equal('3EB0PIX0000000000001');
    expect(strip(viaContent![1])).to.equal(strip(paymentContent(payment).message));
  });

  it('a send given its message id (a chatbot reply recorded as intent) goes out under that id', async () => {
    const h = await connectedSession();
    await h.session.messages.sendText(PEER, 'hello', { messageId: '3EB0AAAABBBBCCCCDDDD' });
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [PEER, { text: 'hello' }, { messageId: '3EB0AAAABBBBCCCCDDDD' }],
    ]);
    await h.session.messages.sendContent(
      PEER,
      { kind: 'buttons', text: 'Pick', buttons: [{ type: 'reply', id: 'a', label: 'A' }] },
      { messageId: '3EB0EEEEFFFF00001111' },
    );
    const [, , options] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    expect(options.messageId).to.equal('3EB0EEEEFFFF00001111');
  });

  it('sendMedia: image with caption, voice note, document with file name, sticker', async () => {
    const h = await connectedSession();
    const data = Buffer.from('bytes');
    await h.session.messages.sendMedia(PEER, { kind: 'image', data, mimetype: 'image/png', caption: 'pic' });
    await h.session.messages.sendMedia(PEER, {
      kind: 'audio',
      data,
      mimetype: 'audio/ogg; codecs=opus',
      ptt: true,
      seconds: 3,
    });
    await h.session.messages.sendMedia(PEER, {
      kind: 'document',
      data,
      mimetype: 'application/pdf',
      fileName: 'a.pdf',
    });
    await h.session.messages.sendMedia(PEER, { kind: 'sticker', data, mimetype: 'image/webp' });
    expect(h.factory.last.callsOf('sendMessage').map((c) => c[1])).to.deep.equal([
      { image: data, mimetype: 'image/png', caption: 'pic' },
      { audio: data, mimetype: 'audio/ogg; codecs=opus', ptt: true, seconds: 3 },
      { document: data, mimetype: 'application/pdf', fileName: 'a.pdf' },
      { sticker: data, mimetype: 'image/webp' },
    ]);
  });

  it('sendContent buttons: a native-flow interactive message relayed with the biz node (and bot node in a DM)', async () => {
    const h = await connectedSession();
    const sent = await h.session.messages.sendContent(PEER, {
      kind: 'buttons',
      text: 'Pick one',
      buttons: [
        { type: 'reply', id: 'yes', label: 'Yes' },
        { type: 'url', url: 'https://example.com', label: 'Site' },
        { type: 'call', phoneNumber: '+5511999', label: 'Call us' },
        { type: 'copy', code: 'PROMO10', label: 'Copy' },
      ],
    });
    const [jid, message, options] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    expect(jid).to.equal(PEER);
    expect(options.messageId).to.equal(sent.messageId);
    const inner = message.viewOnceMessage!.message!;
    expect(inner.messageContextInfo).to.deep.include({ deviceListMetadataVersion: 2 });
    expect(inner.interactiveMessage!.body).to.deep.equal({ text: 'Pick one' });
    const buttons = inner.interactiveMessage!.nativeFlowMessage!.buttons!.map((b) => [
      b.name,
      JSON.parse(b.buttonParamsJson!),
    ]);
    expect(buttons).to.deep.equal([
      ['quick_reply', { display_text: 'Yes', id: 'yes' }],
      ['cta_url', { display_text: 'Site', url: 'https://example.com', merchant_url: 'https://example.com' }],
      ['cta_call', { display_text: 'Call us', phone_number: '+5511999' }],
      ['cta_copy', { display_text: 'Copy', copy_code: 'PROMO10' }],
    ]);
    expect(options.additionalNodes).to.deep.equal([
      {
        tag: 'biz',
        attrs: {},
        content: [
          {
            tag: 'interactive',
            attrs: { type: 'native_flow', v: '1' },
            content: [{ tag: 'native_flow', attrs: { v: '9', name: 'mixed' } }],
          },
        ],
      },
      { tag: 'bot', attrs: { biz_bot: '1' } },
    ]);
  });

  it('sendContent buttons to a group carries the biz node only', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(GROUP, {
      kind: 'buttons',
      text: 'Vote',
      buttons: [{ type: 'reply', id: 'a', label: 'A' }],
    });
    const [, , options] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    expect(options.additionalNodes.map((n) => n.tag)).to.deep.equal(['biz']);
  });

  it('sendContent pix: payment_info with a PIX static code; RANDOM keys are sent as EVP', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'pix',
      payment: { merchantName: 'Loja', key: '123e4567-e89b-12d3-a456-426614174000', keyType: 'RANDOM' },
    });
    const [, message, options] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    const [button] = message.interactiveMessage!.nativeFlowMessage!.buttons!;
    expect(button!.name).to.equal('payment_info');
    const params = JSON.parse(button!.buttonParamsJson!);
    expect(params.currency).to.equal('BRL');
    expect(params.payment_settings).to.deep.equal([
      {
        type: 'pix_static_code',
        pix_static_code: { merchant_name: 'Loja', key: '123e4567-e89b-12d3-a456-426614174000', key_type: 'EVP' },
      },
    ]);
    expect(options.additionalNodes).to.deep.equal([{ tag: 'biz', attrs: { native_flow_name: 'payment_info' } }]);
  });

  it('sendContent scheduledCall: an event message with the join link, relayed with meta event_type=creation', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'scheduledCall',
      card: {
        name: 'Demo',
        description: 'Agenda',
        startTime: 1_900_000_000,
        endTime: 1_900_003_600,
        video: true,
        reminderOffsetSec: 600,
        joinLink: 'https://call.whatsapp.com/video/TOK',
      },
    });
    const [, message, options] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    expect(message.eventMessage).to.deep.equal({
      name: 'Demo',
      description: 'Agenda',
      joinLink: 'https://call.whatsapp.com/video/TOK',
      startTime: 1_900_000_000,
      endTime: 1_900_003_600,
      isCanceled: false,
      extraGuestsAllowed: false,
      isScheduleCall: true,
      hasReminder: true,
      reminderOffsetSec: 600,
    });
    expect(message.messageContextInfo!.messageSecret).to.have.length(32);
    expect(options.additionalNodes).to.deep.equal([{ tag: 'meta', attrs: { event_type: 'creation' } }]);
    expect(h.factory.last.callsOf('createCallLink')).to.have.length(0);
  });

  it('sendContent scheduledCall without a link creates one first', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'scheduledCall',
      card: { name: 'Demo', startTime: 1_900_000_000, video: false, joinLink: '' },
    });
    expect(h.factory.last.callsOf('createCallLink')).to.deep.equal([['audio', { startTime: 1_900_000_000 }]]);
    const [, message] = h.factory.last.callsOf('relayMessage')[0] as Relayed;
    expect(message.eventMessage!.joinLink).to.equal('https://call.whatsapp.com/voice/TOKEN123');
  });

  it('publishStatus (text): status@broadcast, statusJidList with our own jid and known contacts, font int, hex colour', async () => {
    const h = await connectedSession();
    h.factory.last.emit('contacts.upsert', [
      { id: PEER },
      { id: '4455@lid', phoneNumber: '5511000001111@s.whatsapp.net' },
    ]);
    await h.session.status.publish({ type: 'text', text: 'Hi all', backgroundColor: '#112233', font: 2 });
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [
        'status@broadcast',
        { text: 'Hi all' },
        {
          statusJidList: [OWN_JID, PEER, '5511000001111@s.whatsapp.net'],
          broadcast: true,
          backgroundColor: '#112233',
          font: 2,
        },
      ],
    ]);
  });

  it('publishStatus (audio): a voice note by default', async () => {
    const h = await connectedSession();
    const data = Buffer.from('ogg');
    await h.session.status.publish({
      type: 'audio',
      text: '',
      media: { kind: 'audio', data, mimetype: 'audio/ogg; codecs=opus' },
    });
    const [jid, content, options] = h.factory.last.callsOf('sendMessage')[0]!;
    expect(jid).to.equal('status@broadcast');
    expect(content).to.deep.equal({ audio: data, mimetype: 'audio/ogg; codecs=opus', ptt: true });
    expect(options).to.deep.equal({ statusJidList: [OWN_JID], broadcast: true });
  });

  it('deleteMessage revokes with the key; a status revoke carries the status list', async () => {
    const h = await connectedSession();
    await h.session.messages.deleteMessage(PEER, 'M1', true);
    await h.session.messages.deleteMessage('status@broadcast', 'S1', true);
    expect(h.factory.last.callsOf('sendMessage')).to.deep.equal([
      [PEER, { delete: { remoteJid: PEER, id: 'M1', fromMe: true } }, undefined],
      [
        'status@broadcast',
        { delete: { remoteJid: 'status@broadcast', id: 'S1', fromMe: true } },
        { statusJidList: [OWN_JID] },
      ],
    ]);
  });

  it('markRead, setPresence and rejectCall map to the socket methods', async () => {
    const h = await connectedSession();
    await h.session.messages.markRead(GROUP, ['A', 'B'], '99@lid');
    await h.session.messages.markRead(PEER, ['C']);
    await h.session.profile.setPresence(true);
    await h.session.profile.setPresence(false);
    await h.session.calls.reject('CALL1', PEER);
    const sock = h.factory.last;
    expect(sock.callsOf('readMessages')).to.deep.equal([
      [
        [
          { remoteJid: GROUP, id: 'A', fromMe: false, participant: '99@lid' },
          { remoteJid: GROUP, id: 'B', fromMe: false, participant: '99@lid' },
        ],
      ],
      [[{ remoteJid: PEER, id: 'C', fromMe: false }]],
    ]);
    expect(sock.callsOf('sendPresenceUpdate')).to.deep.equal([
      ['available', undefined],
      ['unavailable', undefined],
    ]);
    expect(sock.callsOf('rejectCall')).to.deep.equal([['CALL1', PEER]]);
  });

  it('sendChatPresence shows typing in one chat', async () => {
    const h = await connectedSession();
    await h.session.messages.sendChatPresence('5511988887777', 'composing');
    await h.session.messages.sendChatPresence(PEER, 'paused');
    expect(h.factory.last.callsOf('sendPresenceUpdate')).to.deep.equal([
      ['composing', PEER],
      ['paused', PEER],
    ]);
  });

  it('listLabels and assignLabels: labels known from labels.edit, assigned with app-state patches', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.emit('labels.edit', { id: '2', name: 'Lead', color: 1, deleted: false });
    sock.emit('labels.edit', { id: '1', name: 'VIP', color: 2, deleted: false });
    expect(await h.session.labels.list()).to.deep.equal([
      { id: '1', name: 'VIP' },
      { id: '2', name: 'Lead' },
    ]);
    expect(await h.session.labels.assign(PEER, ['1', '2'], true)).to.deep.equal({
      chatJid: PEER,
      labels: [
        { id: '1', name: 'VIP' },
        { id: '2', name: 'Lead' },
      ],
    });
    expect(sock.callsOf('addChatLabel')).to.deep.equal([
      [PEER, '1'],
      [PEER, '2'],
    ]);
    expect(await h.session.labels.assign(PEER, ['1'], false)).to.deep.equal({
      chatJid: PEER,
      labels: [{ id: '2', name: 'Lead' }],
    });
    expect(sock.callsOf('removeChatLabel')).to.deep.equal([[PEER, '1']]);
    const err = (await h.session.labels.assign(PEER, ['404'], true).catch((e: unknown) => e)) as AppError;
    expect(err.code).to.equal(ErrorCode.NotFound);
    expect(sock.callsOf('addChatLabel')).to.have.length(2);
    expect((await h.session.labels.chats(false)).find((c) => c.chatJid === PEER)?.labels).to.deep.equal([
      { id: '2', name: 'Lead' },
    ]);
  });

  it('createCallLink returns the token and the audio or video url', async () => {
    const h = await connectedSession();
    expect(await h.session.calls.createLink('video', 1_900_000_000)).to.deep.equal({
      token: 'TOKEN123',
      url: 'https://call.whatsapp.com/video/TOKEN123',
    });
    expect(await h.session.calls.createLink('audio')).to.deep.equal({
      token: 'TOKEN123',
      url: 'https://call.whatsapp.com/voice/TOKEN123',
    });
    expect(h.factory.last.callsOf('createCallLink')).to.deep.equal([
      ['video', { startTime: 1_900_000_000 }],
      ['audio', undefined],
    ]);
  });

  it('listGroups derives isAdmin/isSuperAdmin from `admin`', async () => {
    const h = await connectedSession();
    const group: GroupMetadata = {
      id: GROUP,
      subject: 'Team',
      desc: 'Our team',
      owner: '11@lid',
      ownerPn: '5511000000001@s.whatsapp.net',
      size: 3,
      participants: [
        { id: '11@lid', phoneNumber: '5511000000001@s.whatsapp.net', admin: 'superadmin' },
        { id: '5511000000002@s.whatsapp.net', admin: 'admin' },
        { id: '5511000000003@s.whatsapp.net', admin: null },
      ],
    };
    h.factory.last.groups = { [GROUP]: group };
    expect(await h.session.groups.list(false)).to.deep.equal([
      { jid: GROUP, name: 'Team', description: 'Our team', creatorJid: '5511000000001@s.whatsapp.net', memberCount: 3 },
    ]);
    const [withMembers] = await h.session.groups.list(true);
    expect(withMembers!.members).to.deep.equal([
      { jid: '5511000000001@s.whatsapp.net', isAdmin: true, isSuperAdmin: true },
      { jid: '5511000000002@s.whatsapp.net', isAdmin: true, isSuperAdmin: false },
      { jid: '5511000000003@s.whatsapp.net', isAdmin: false, isSuperAdmin: false },
    ]);
    // Fetched metadata feeds Baileys' cachedGroupMetadata.
    expect(await h.factory.last.config.cachedGroupMetadata!(GROUP)).to.equal(group);
  });

  it('updateProfile: picture on our own jid, removal, name and status', async () => {
    const h = await connectedSession();
    const jpeg = Buffer.from('jpeg');
    await h.session.profile.update({ picture: jpeg, name: 'Shop', status: 'Open 9-18' });
    await h.session.profile.update({ picture: null });
    const sock = h.factory.last;
    expect(sock.callsOf('updateProfilePicture')).to.deep.equal([[OWN_JID, jpeg]]);
    expect(sock.callsOf('removeProfilePicture')).to.deep.equal([[OWN_JID]]);
    expect(sock.callsOf('updateProfileName')).to.deep.equal([['Shop']]);
    expect(sock.callsOf('updateProfileStatus')).to.deep.equal([['Open 9-18']]);
  });

  it('getPrivacy forces a fetch and maps Baileys names to ours', async () => {
    const h = await connectedSession();
    h.factory.last.privacy = {
      last: 'contacts',
      online: 'match_last_seen',
      profile: 'all',
      status: 'contact_blacklist',
      readreceipts: 'none',
      calladd: 'known',
      groupadd: 'contacts',
      messages: 'all',
    };
    expect(await h.session.privacy.get()).to.deep.equal({
      lastSeen: 'contacts',
      online: 'match_last_seen',
      profile: 'all',
      status: 'contact_blacklist',
      readReceipts: 'none',
      callAdd: 'known',
      groupAdd: 'contacts',
    });
    expect(h.factory.last.callsOf('fetchPrivacySettings')).to.deep.equal([[true]]);
  });

  it('setPrivacy calls the matching setter and refuses values the field does not allow', async () => {
    const h = await connectedSession();
    await h.session.privacy.set('lastSeen', 'none');
    await h.session.privacy.set('online', 'all');
    await h.session.privacy.set('profile', 'contacts');
    await h.session.privacy.set('status', 'contact_blacklist');
    await h.session.privacy.set('readReceipts', 'all');
    await h.session.privacy.set('callAdd', 'known');
    await h.session.privacy.set('groupAdd', 'contacts');
    const sock = h.factory.last;
    expect(
      [
        'updateLastSeenPrivacy',
        'updateOnlinePrivacy',
        'updateProfilePicturePrivacy',
        'updateStatusPrivacy',
        'updateReadReceiptsPrivacy',
        'updateCallPrivacy',
        'updateGroupsAddPrivacy',
      ].map((m) => sock.callsOf(m)),
    ).to.deep.equal([
      [['none']],
      [['all']],
      [['contacts']],
      [['contact_blacklist']],
      [['all']],
      [['known']],
      [['contacts']],
    ]);
    let err: unknown;
    await h.session.privacy.set('callAdd', 'contacts').catch((e: unknown) => (err = e));
    expect((err as AppError).code).to.equal(ErrorCode.InvalidInput);
  });

  it('getProfile: our own, a contact (privacy-hidden parts are null), and a number not on WhatsApp', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    const me = (await h.session.profile.get())!;
    expect(me).to.deep.include({ name: 'Me', about: null, pictureUrl: null, isBusiness: false });
    sock.abouts.set(PEER, 'Available');
    sock.pictures.set(PEER, 'https://pps.whatsapp.net/v/peer.jpg');
    sock.businesses.add(PEER);
    expect(await h.session.profile.get('5511988887777')).to.deep.equal({
      jid: PEER,
      name: null,
      about: 'Available',
      pictureUrl: 'https://pps.whatsapp.net/v/peer.jpg',
      isBusiness: true,
      business: { description: 'shop', category: null, email: null, website: [], address: null },
    });
    expect(await h.session.profile.get('0001')).to.equal(undefined);
  });

  it('lookup asks onWhatsApp and adds the LID when known', async () => {
    const h = await connectedSession();
    expect(await h.session.profile.lookup('+55 11 98888-7777')).to.deep.equal({
      found: true,
      jid: PEER,
      lid: '777000111@lid',
    });
    expect(await h.session.profile.lookup('0001')).to.deep.equal({ found: false, jid: undefined, lid: undefined });
    expect(h.factory.last.callsOf('onWhatsApp')).to.deep.equal([['5511988887777'], ['0001']]);
  });
});
