import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { CallEvent, DeliveryEvent, MsgNetEvent, NormalizedMessage } from '../../../src/msgnet/msgnet-events.js';
import { OWN_JID, OWN_LID } from '../../helpers/baileys/fake-baileys-socket.js';
import { connectedSession } from '../../helpers/baileys/baileys-harness.js';
import type { Harness, HarnessOptions } from '../../helpers/baileys/baileys-harness.js';

const PEER = '5511988887777@s.whatsapp.net';
const GROUP = '120363000000000001@g.us';

async function receive(
  messages: WAMessage[],
  options: HarnessOptions = {},
  type: 'notify' | 'append' = 'notify',
): Promise<Harness> {
  const h = await connectedSession(options);
  h.factory.last.emit('messages.upsert', { type, messages });
  return h;
}

function messagesOf(events: MsgNetEvent[]): NormalizedMessage[] {
  return events.flatMap((e) => (e.type === 'message' ? [e.message] : []));
}

describe('BaileysSession: incoming messages', () => {
  it('maps a private text (conversation)', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'M1', fromMe: false },
        message: { conversation: 'hello' },
        messageTimestamp: 1_700_000_123,
        pushName: 'Ana',
      },
    ]);
    expect(messagesOf(h.events)).to.deep.equal([
      {
        id: 'M1',
        fromMe: false,
        timestamp: 1_700_000_123_000,
        chat: { jid: PEER, type: 'private' },
        sender: { jid: PEER, name: 'Ana' },
        type: 'text',
        text: 'hello',
      },
    ]);
  });

  it('maps an extended text, and our own messages (append) with our own jid as sender', async () => {
    const h = await receive(
      [
        {
          key: { remoteJid: PEER, id: 'M2', fromMe: true },
          message: { extendedTextMessage: { text: 'see https://x.y' } },
          messageTimestamp: 5,
        },
      ],
      {},
      'append',
    );
    const [msg] = messagesOf(h.events);
    expect(msg!.text).to.equal('see https://x.y');
    expect(msg!.fromMe).to.equal(true);
    expect(msg!.sender).to.deep.equal({ jid: OWN_JID, lid: '88001122334455@lid', name: 'Me' });
    expect(OWN_LID).to.include('88001122334455');
  });

  it('maps a location: type location, its coordinates, name and address', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'L1' },
        message: { locationMessage: { degreesLatitude: -23.55, degreesLongitude: -46.63, name: 'Sé', address: 'SP' } },
        messageTimestamp: 5,
      },
    ]);
    const [msg] = messagesOf(h.events);
    expect(msg).to.deep.include({
      type: 'location',
      text: 'Sé',
      location: { latitude: -23.55, longitude: -46.63, name: 'Sé', address: 'SP' },
    });
  });

  it('maps the mentions of a text and of a caption (contextInfo.mentionedJid)', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'M3' },
        message: { extendedTextMessage: { text: 'hi @5511988887777', contextInfo: { mentionedJid: [PEER] } } },
        messageTimestamp: 5,
      },
      {
        key: { remoteJid: PEER, id: 'M4' },
        message: {
          imageMessage: { mimetype: 'image/jpeg', caption: 'look', contextInfo: { mentionedJid: [OWN_JID] } },
        },
        messageTimestamp: 6,
      },
      {
        key: { remoteJid: PEER, id: 'M5' },
        message: { conversation: 'no one' },
        messageTimestamp: 7,
      },
    ]);
    const [text, image, plain] = messagesOf(h.events);
    expect(text!.mentions).to.deep.equal([PEER]);
    expect(image!.mentions).to.deep.equal([OWN_JID]);
    expect(plain!.mentions).to.equal(undefined);
  });

  it('maps a group text: the sender is the participant, with its LID and push name', async () => {
    const h = await receive([
      {
        key: {
          remoteJid: GROUP,
          id: 'G1',
          fromMe: false,
          participant: '99887766@lid',
          participantAlt: '5511977776666@s.whatsapp.net',
        },
        message: { conversation: 'hi all' },
        messageTimestamp: 10,
        pushName: 'Bia',
      },
    ]);
    const [msg] = messagesOf(h.events);
    expect(msg!.chat).to.deep.equal({ jid: GROUP, type: 'group' });
    expect(msg!.sender).to.deep.equal({ jid: '5511977776666@s.whatsapp.net', lid: '99887766@lid', name: 'Bia' });
  });

  it('marks a group as a community when the session holds its metadata (isCommunity), and no other', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    const COMMUNITY = '120363000000000077@g.us';
    const meta = { subject: 'x', participants: [], owner: undefined, creation: 1 };
    sock.emit('groups.upsert', [
      { ...meta, id: COMMUNITY, isCommunity: true },
      { ...meta, id: GROUP, isCommunity: false },
    ]);
    const UNKNOWN = '120363000000000099@g.us';
    sock.emit('messages.upsert', {
      type: 'notify',
      messages: [COMMUNITY, GROUP, UNKNOWN].map((remoteJid, i) => ({
        key: { remoteJid, id: `C${i}`, fromMe: false, participant: PEER },
        message: { conversation: 'hi' },
        messageTimestamp: 10,
      })),
    });
    expect(messagesOf(h.events).map((m) => m.chat)).to.deep.equal([
      { jid: COMMUNITY, type: 'group', isCommunity: true },
      { jid: GROUP, type: 'group', isCommunity: false },
      // Not known: the payload gives false, the driver does not pretend to know.
      { jid: UNKNOWN, type: 'group' },
    ]);
  });

  it('flags a voice note (audio with ptt) and a round video note (ptvMessage); plain audio and video stay plain', async () => {
    const h = await receive([
      { key: { remoteJid: PEER, id: 'V1' }, message: { audioMessage: { mimetype: 'audio/ogg', ptt: true } } },
      { key: { remoteJid: PEER, id: 'V2' }, message: { audioMessage: { mimetype: 'audio/mpeg', ptt: false } } },
      { key: { remoteJid: PEER, id: 'V3' }, message: { ptvMessage: { mimetype: 'video/mp4' } } },
      { key: { remoteJid: PEER, id: 'V4' }, message: { videoMessage: { mimetype: 'video/mp4' } } },
    ]);
    expect(messagesOf(h.events).map((m) => m.media)).to.deep.equal([
      { kind: 'audio', mimetype: 'audio/ogg', ptt: true },
      { kind: 'audio', mimetype: 'audio/mpeg' },
      { kind: 'video', mimetype: 'video/mp4', ptv: true },
      { kind: 'video', mimetype: 'video/mp4' },
    ]);
  });

  it('reads the phone number of a LID-addressed chat from remoteJidAlt', async () => {
    const h = await receive([
      {
        key: { remoteJid: '4455@lid', remoteJidAlt: PEER, id: 'L1', fromMe: false },
        message: { conversation: 'x' },
        messageTimestamp: 1,
      },
    ]);
    expect(messagesOf(h.events)[0]!.chat).to.deep.equal({ jid: PEER, lid: '4455@lid', type: 'private' });
  });

  it('maps an image with caption: kind, mimetype, caption and size', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'I1', fromMe: false },
        message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look', fileLength: 2048 } },
        messageTimestamp: 1,
      },
    ]);
    const [msg] = messagesOf(h.events);
    expect(msg!.type).to.equal('media');
    expect(msg!.text).to.equal('look');
    expect(msg!.media).to.deep.equal({ kind: 'image', mimetype: 'image/jpeg', caption: 'look', size: 2048 });
  });

  it('maps a document inside documentWithCaptionMessage with its file name', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'D1', fromMe: false },
        message: {
          documentWithCaptionMessage: {
            message: {
              documentMessage: { mimetype: 'application/pdf', fileName: 'a.pdf', caption: 'doc', fileLength: 10 },
            },
          },
        },
        messageTimestamp: 1,
      },
    ]);
    expect(messagesOf(h.events)[0]!.media).to.deep.equal({
      kind: 'document',
      mimetype: 'application/pdf',
      fileName: 'a.pdf',
      caption: 'doc',
      size: 10,
    });
  });

  it('maps button replies from the three reply shapes', async () => {
    const h = await receive([
      {
        key: { remoteJid: PEER, id: 'B1', fromMe: false },
        message: { buttonsResponseMessage: { selectedButtonId: 'yes', selectedDisplayText: 'Yes' } },
      },
      {
        key: { remoteJid: PEER, id: 'B2', fromMe: false },
        message: { templateButtonReplyMessage: { selectedId: 'tpl-1', selectedDisplayText: 'One' } },
      },
      {
        key: { remoteJid: PEER, id: 'B3', fromMe: false },
        message: {
          interactiveResponseMessage: {
            body: { text: 'Buy' },
            nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: '{"id":"buy-now"}', version: 1 },
          },
        },
      },
    ]);
    expect(messagesOf(h.events).map((m) => [m.type, m.selectedButtonId, m.text])).to.deep.equal([
      ['buttons_response', 'yes', 'Yes'],
      ['buttons_response', 'tpl-1', 'One'],
      ['buttons_response', 'buy-now', 'Buy'],
    ]);
  });

  it('maps a status post: chat type status, sender the poster', async () => {
    const h = await receive([
      {
        key: { remoteJid: 'status@broadcast', id: 'S1', fromMe: false, participant: PEER },
        message: { extendedTextMessage: { text: 'my story' } },
        pushName: 'Ana',
      },
    ]);
    const [msg] = messagesOf(h.events);
    expect(msg!.chat).to.deep.equal({ jid: 'status@broadcast', type: 'status' });
    expect(msg!.sender).to.deep.equal({ jid: PEER, name: 'Ana' });
  });

  it('maps newsletters, reactions and drops protocol messages', async () => {
    const h = await receive([
      { key: { remoteJid: '1203@newsletter', id: 'N1', fromMe: false }, message: { conversation: 'news' } },
      {
        key: { remoteJid: PEER, id: 'R1', fromMe: false },
        message: { reactionMessage: { text: '👍', key: { id: 'M1' } } },
      },
      { key: { remoteJid: PEER, id: 'P1', fromMe: false }, message: { protocolMessage: { type: 0 } } },
      { key: { remoteJid: PEER, id: 'E1', fromMe: false }, message: null },
    ]);
    expect(messagesOf(h.events).map((m) => [m.id, m.chat.type, m.type, m.text])).to.deep.equal([
      ['N1', 'newsletter', 'text', 'news'],
      ['R1', 'private', 'reaction', '👍'],
    ]);
  });

  it('drops group messages with ignoreGroupMessages and statuses with ignoreStatus', async () => {
    const msgs: WAMessage[] = [
      { key: { remoteJid: GROUP, id: 'G', fromMe: false, participant: PEER }, message: { conversation: 'g' } },
      {
        key: { remoteJid: 'status@broadcast', id: 'S', fromMe: false, participant: PEER },
        message: { conversation: 's' },
      },
      { key: { remoteJid: PEER, id: 'P', fromMe: false }, message: { conversation: 'p' } },
    ];
    const h = await receive(msgs, { settings: { ignoreGroupMessages: true, ignoreStatus: true } });
    expect(messagesOf(h.events).map((m) => m.id)).to.deep.equal(['P']);
  });
});

describe('BaileysSession: delivery, calls, groups', () => {
  it('maps messages.update statuses 2/3/4/5/0 of our messages, read/played of received ones as _self, skipping others', async () => {
    const h = await connectedSession();
    h.factory.last.emit('messages.update', [
      { key: { remoteJid: PEER, id: 'A', fromMe: true }, update: { status: 2 } },
      { key: { remoteJid: PEER, id: 'B', fromMe: true }, update: { status: 3 } },
      { key: { remoteJid: PEER, id: 'C', fromMe: true }, update: { status: 4, messageTimestamp: 1_700_000_000 } },
      { key: { remoteJid: PEER, id: 'D', fromMe: true }, update: { status: 5 } },
      { key: { remoteJid: PEER, id: 'E', fromMe: true }, update: { status: 0, messageStubParameters: ['479'] } },
      // A received message read on our own phone (Baileys' `read-self` receipt), then one played there.
      { key: { remoteJid: PEER, id: 'F', fromMe: false }, update: { status: 4 } },
      { key: { remoteJid: PEER, id: 'G', fromMe: true }, update: { starred: true } },
      { key: { remoteJid: PEER, id: 'H', fromMe: true }, update: { status: 3 } },
      { key: { remoteJid: PEER, id: 'I', fromMe: false }, update: { status: 5 } },
      // Delivery of a received message is no news.
      { key: { remoteJid: PEER, id: 'J', fromMe: false }, update: { status: 3 } },
    ]);
    const deliveries = h.events as DeliveryEvent[];
    expect(deliveries.map((d) => [d.status, d.messageIds])).to.deep.equal([
      ['sent', ['A']],
      ['delivered', ['B', 'H']],
      ['read', ['C']],
      ['played', ['D']],
      ['failed', ['E']],
      ['read_self', ['F']],
      ['played_self', ['I']],
    ]);
    expect(deliveries[2]!).to.include({ chatJid: PEER, recipient: PEER, timestamp: 1_700_000_000_000 });
  });

  it('maps message-receipt.update (groups) to delivered/read per reader', async () => {
    const h = await connectedSession();
    h.factory.last.emit('message-receipt.update', [
      { key: { remoteJid: GROUP, id: 'A', fromMe: true }, receipt: { userJid: PEER, receiptTimestamp: 100 } },
      {
        key: { remoteJid: GROUP, id: 'A', fromMe: true },
        receipt: { userJid: '5511000@s.whatsapp.net', readTimestamp: 200 },
      },
      // Our own other device read a message the group sent us; its delivery receipt says nothing.
      { key: { remoteJid: GROUP, id: 'B', fromMe: false }, receipt: { userJid: OWN_JID, readTimestamp: 300 } },
      { key: { remoteJid: GROUP, id: 'C', fromMe: false }, receipt: { userJid: OWN_JID, receiptTimestamp: 300 } },
      // Someone else's receipt of a message we did not send is not ours to report.
      { key: { remoteJid: GROUP, id: 'D', fromMe: false }, receipt: { userJid: PEER, readTimestamp: 300 } },
    ]);
    expect(h.events).to.deep.equal([
      { type: 'delivery', chatJid: GROUP, recipient: PEER, status: 'delivered', messageIds: ['A'], timestamp: 100_000 },
      {
        type: 'delivery',
        chatJid: GROUP,
        recipient: '5511000@s.whatsapp.net',
        status: 'read',
        messageIds: ['A'],
        timestamp: 200_000,
      },
      {
        type: 'delivery',
        chatJid: GROUP,
        recipient: OWN_JID,
        status: 'read_self',
        messageIds: ['B'],
        timestamp: 300_000,
      },
    ]);
  });

  it('maps call events, reporting the phone number and rejecting with the raw caller', async () => {
    const h = await connectedSession();
    const base = {
      chatId: '4455@lid',
      from: '4455@lid',
      callerPn: PEER,
      date: new Date(1_700_000_000_000),
      offline: false,
    };
    h.factory.last.emit('call', [
      { ...base, id: 'C1', status: 'offer', isVideo: true, isGroup: false },
      { ...base, id: 'C1', status: 'ringing' },
      { ...base, id: 'C2', status: 'accept' },
      { ...base, id: 'C3', status: 'reject' },
      { ...base, id: 'C4', status: 'terminate' },
      { ...base, id: 'C5', status: 'timeout' },
      { ...base, id: 'C6', status: 'relaylatency' },
      { ...base, id: 'C6', status: 'preaccept' },
    ]);
    const calls = h.events as CallEvent[];
    expect(calls.map((c) => [c.callId, c.status, c.reason])).to.deep.equal([
      ['C1', 'offer', undefined],
      ['C2', 'accepted', undefined],
      ['C3', 'rejected', undefined],
      ['C4', 'terminated', undefined],
      ['C5', 'terminated', 'timeout'],
      ['C6', 'latency', undefined],
    ]);
    const { acknowledge, ...offer } = calls[0]!;
    expect(offer).to.deep.equal({
      type: 'call',
      callId: 'C1',
      from: PEER,
      status: 'offer',
      isVideo: true,
      isGroup: false,
      timestamp: 1_700_000_000_000,
    });
    // Only an offer's ack waits for the owner (patches/: deferCallAck).
    expect(acknowledge).to.be.a('function');
    expect(calls.slice(1).map((c) => c.acknowledge)).to.deep.equal([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    await h.session.calls.reject('C1', PEER);
    expect(h.factory.last.callsOf('rejectCall')).to.deep.equal([['C1', '4455@lid']]);
  });

  it('maps group participant changes and subject changes', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    for (const action of ['add', 'remove', 'promote', 'demote', 'modify'] as const) {
      sock.emit('group-participants.update', {
        id: GROUP,
        author: PEER,
        action,
        participants: [{ id: '99@lid', phoneNumber: PEER }],
      });
    }
    sock.emit('groups.update', [
      { id: GROUP, subject: 'New name' },
      { id: GROUP, announce: true },
    ]);
    expect(h.events.map((e) => (e.type === 'group' ? [e.action, e.participants, e.groupName] : e.type))).to.deep.equal([
      ['joined', [{ jid: PEER, lid: '99@lid' }], undefined],
      ['left', [{ jid: PEER, lid: '99@lid' }], undefined],
      ['promoted', [{ jid: PEER, lid: '99@lid' }], undefined],
      ['demoted', [{ jid: PEER, lid: '99@lid' }], undefined],
      ['name', [], 'New name'],
      ['settings', [], undefined],
    ]);
  });
});

// `LabelAssociationType` is not exported from Baileys' package root, hence the `as never` on its values.
describe('BaileysSession: labels', () => {
  it('reports label edits and chat associations, and lists them from the store after a restart', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.emit('labels.edit', { id: '1', name: 'VIP', color: 1, deleted: false });
    sock.emit('labels.edit', { id: '1', name: 'VIP', color: 1, deleted: false });
    sock.emit('labels.association', {
      type: 'add',
      association: { type: 'label_jid' as never, chatId: PEER, labelId: '1' },
    });
    sock.emit('labels.association', {
      type: 'add',
      association: { type: 'label_jid' as never, chatId: PEER, labelId: '1' },
    });
    sock.emit('labels.association', {
      type: 'add',
      association: { type: 'label_message' as never, chatId: PEER, labelId: '1', messageId: 'M1' },
    });
    expect(h.events.map((e) => (e.type === 'labels' ? [e.action, e.chatJid, e.labels] : e.type))).to.deep.equal([
      ['edit', '', [{ id: '1', name: 'VIP' }]],
      ['add', PEER, [{ id: '1', name: 'VIP' }]],
    ]);
    expect(await h.session.labels.chats(false)).to.deep.equal([{ chatJid: PEER, labels: [{ id: '1', name: 'VIP' }] }]);
    await h.session.close();
    expect(h.store.data.get(`labels:chat:${PEER}`)).to.equal('["1"]');
    expect(h.store.data.get('labels:name:1')).to.equal('VIP');

    const again = await connectedSession({ store: h.store });
    expect(await again.session.labels.chats(false)).to.deep.equal([
      { chatJid: PEER, labels: [{ id: '1', name: 'VIP' }] },
    ]);
  });

  it('refresh resyncs app state from a snapshot and drops associations it no longer holds', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.emit('labels.edit', { id: '1', name: 'VIP', color: 1, deleted: false });
    sock.emit('labels.association', {
      type: 'add',
      association: { type: 'label_jid' as never, chatId: PEER, labelId: '1' },
    });
    sock.emit('labels.association', {
      type: 'add',
      association: { type: 'label_jid' as never, chatId: GROUP, labelId: '1' },
    });
    h.events.length = 0;
    sock.resyncEvents = [
      ['labels.association', { type: 'add', association: { type: 'label_jid', chatId: PEER, labelId: '1' } }],
    ];
    const chats = await h.session.labels.chats(true);
    expect(sock.callsOf('authState.keys.set')).to.deep.equal([[{ 'app-state-sync-version': { regular: null } }]]);
    expect(sock.callsOf('resyncAppState')).to.deep.equal([[['regular'], true]]);
    expect(chats).to.deep.equal([{ chatJid: PEER, labels: [{ id: '1', name: 'VIP' }] }]);
    expect(h.events.map((e) => (e.type === 'labels' ? [e.action, e.chatJid] : e.type))).to.deep.equal([
      ['remove', GROUP],
    ]);
  });
});
