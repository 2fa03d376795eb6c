import { createHash, randomBytes } from 'node:crypto';
import { Writable } from 'node:stream';
import { expect } from 'chai';
import { aesEncryptGCM, hmacSign, proto } from '@whiskeysockets/baileys';
import type { BinaryNode, WAMessage } from '@whiskeysockets/baileys';
import { pino } from 'pino';
import { ErrorCode } from '../../../src/errors.js';
import type { AppError } from '../../../src/errors.js';
import { PollBook, POLL_PREFIX } from '../../../src/msgnet/baileys/poll-book.js';
import type { MsgNetEvent, NormalizedMessage } from '../../../src/msgnet/msgnet-events.js';
import { OWN_JID } from '../../helpers/baileys/fake-baileys-socket.js';
import { connectedSession, silentLog } from '../../helpers/baileys/baileys-harness.js';
import type { Harness, HarnessOptions } from '../../helpers/baileys/baileys-harness.js';
import { MemoryAuthStore } from '../../helpers/baileys/memory-auth-store.js';

const PEER = '5511988887777@s.whatsapp.net';
const PEER_LID = '4455667788@lid';
const GROUP = '120363000000000001@g.us';
const OWN_LID = '88001122334455@lid';

type Relayed = [string, proto.IMessage, { messageId: string; additionalNodes: BinaryNode[] }];
type Sent = [string, Record<string, unknown>, Record<string, unknown> | undefined];

const BIZ_NODES: BinaryNode[] = [
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
];

function sentOf(h: Harness): Sent[] {
  return h.factory.last.callsOf('sendMessage') as Sent[];
}

function relayedOf(h: Harness): Relayed[] {
  return h.factory.last.callsOf('relayMessage') as Relayed[];
}

/** The interactive message inside the view-once wrapper native-flow messages travel in. */
function interactiveOf(message: proto.IMessage): proto.Message.IInteractiveMessage {
  return message.viewOnceMessage!.message!.interactiveMessage!;
}

function buttonsOf(flow: proto.Message.InteractiveMessage.INativeFlowMessage | null | undefined): unknown[] {
  return (flow?.buttons ?? []).map((b) => [b.name, JSON.parse(b.buttonParamsJson!)]);
}

function sha256(data: Buffer | string): Buffer {
  return createHash('sha256').update(data).digest();
}

async function receive(h: Harness, messages: WAMessage[]): Promise<NormalizedMessage[]> {
  const before = h.events.length;
  h.factory.last.emit('messages.upsert', { type: 'notify', messages });
  return messagesOf(h.events.slice(before));
}

function messagesOf(events: MsgNetEvent[]): NormalizedMessage[] {
  return events.flatMap((e) => (e.type === 'message' ? [e.message] : []));
}

/**
 * A poll vote as a WhatsApp client encrypts it: AES-256-GCM under a key derived (HMAC-SHA256) from the
 * poll's secret, its id, its creator's and the voter's addresses, naming each option by its SHA-256.
 */
function encryptVote(
  options: string[],
  poll: { id: string; secret: Buffer; creatorJid: string },
  voterJid: string,
): proto.Message.IPollEncValue {
  const plaintext = proto.Message.PollVoteMessage.encode({ selectedOptions: options.map((o) => sha256(o)) }).finish();
  const sign = Buffer.concat([
    Buffer.from(poll.id),
    Buffer.from(poll.creatorJid),
    Buffer.from(voterJid),
    Buffer.from('Poll Vote'),
    new Uint8Array([1]),
  ]);
  const key = hmacSign(sign, hmacSign(poll.secret, new Uint8Array(32), 'sha256'), 'sha256');
  const encIv = randomBytes(12);
  const encPayload = aesEncryptGCM(plaintext, key, encIv, Buffer.from(`${poll.id}\u0000${voterJid}`));
  return { encPayload, encIv };
}

/** A pino logger whose lines the test reads. */
function capturingLog(): { log: HarnessOptions['log']; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(JSON.parse(chunk.toString()) as Record<string, unknown>);
      done();
    },
  });
  return { log: pino({ level: 'info' }, stream), lines };
}

const REPLY_TO = { id: 'Q1', chatJid: PEER, fromMe: false, senderJid: PEER, text: 'which one?' };

describe('BaileysSession: sending the message kinds (sendContent)', () => {
  it('contacts: one vCard 3.0 per card (FN, ORG, TEL with waid, EMAIL, URL), escaped, under the given id', async () => {
    const h = await connectedSession();
    const sent = await h.session.messages.sendContent(
      PEER,
      {
        kind: 'contacts',
        contacts: [
          {
            fullName: 'Ana; Souza, Jr.',
            phone: '+55 11 98888-7777',
            organization: 'Acme\\Sales\nSP',
            email: 'ana@example.com',
            url: 'https://example.com/a,b',
          },
        ],
      },
      { messageId: '3EB0C0C0C0C0', replyTo: REPLY_TO },
    );
    expect(sent.messageId).to.equal('SENT1');
    const vcard = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:;Ana\\; Souza\\, Jr.;;;',
      'FN:Ana\\; Souza\\, Jr.',
      'ORG:Acme\\\\Sales\\nSP',
      'TEL;type=CELL;waid=5511988887777:+5511988887777',
      'EMAIL:ana@example.com',
      'URL:https://example.com/a,b',
      'END:VCARD',
    ].join('\n');
    expect(sentOf(h)).to.deep.equal([
      [
        PEER,
        { contacts: { displayName: 'Ana; Souza, Jr.', contacts: [{ displayName: 'Ana; Souza, Jr.', vcard }] } },
        {
          messageId: '3EB0C0C0C0C0',
          quoted: { key: { remoteJid: PEER, id: 'Q1', fromMe: false }, message: { conversation: 'which one?' } },
        },
      ],
    ]);
  });

  it('contacts: several cards are one contacts array; optional fields are left out', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'contacts',
      contacts: [
        { fullName: 'Ana', phone: '5511911112222' },
        { fullName: 'Bia', phone: '5511933334444' },
      ],
    });
    const [[, content]] = sentOf(h) as [Sent];
    expect(content).to.deep.equal({
      contacts: {
        displayName: '2 contacts',
        contacts: [
          {
            displayName: 'Ana',
            vcard:
              'BEGIN:VCARD\nVERSION:3.0\nN:;Ana;;;\nFN:Ana\nTEL;type=CELL;waid=5511911112222:+5511911112222\nEND:VCARD',
          },
          {
            displayName: 'Bia',
            vcard:
              'BEGIN:VCARD\nVERSION:3.0\nN:;Bia;;;\nFN:Bia\nTEL;type=CELL;waid=5511933334444:+5511933334444\nEND:VCARD',
          },
        ],
      },
    });
  });

  it('poll: name, values and selectableCount with a fresh 32-byte secret, remembered under the sent id', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'poll',
      question: 'Colour?',
      options: ['Red', 'Blue'],
      maxAnswer: 1,
    });
    await h.session.messages.sendContent(
      PEER,
      { kind: 'poll', question: 'Days?', options: ['Mon', 'Tue', 'Wed'], maxAnswer: 3 },
      { messageId: '3EB0POLL0002' },
    );
    const [[jid, first, firstOptions], [, second, secondOptions]] = sentOf(h) as [Sent, Sent];
    expect(jid).to.equal(PEER);
    const secret = (first.poll as { messageSecret: Buffer }).messageSecret;
    expect(secret).to.have.length(32);
    expect(first).to.deep.equal({
      poll: { name: 'Colour?', values: ['Red', 'Blue'], selectableCount: 1, messageSecret: secret },
    });
    expect((second.poll as { selectableCount: number }).selectableCount).to.equal(3);
    expect((second.poll as { messageSecret: Buffer }).messageSecret.equals(secret)).to.equal(false);
    // The id is chosen before the send, so the poll is known before any vote can arrive.
    const firstId = firstOptions!.messageId as string;
    expect(firstId).to.match(/^3EB0[0-9A-F]+$/);
    expect(secondOptions).to.deep.equal({ messageId: '3EB0POLL0002' });
    await h.session.close();
    const stored = JSON.parse(h.store.data.get(POLL_PREFIX + firstId)!);
    expect(stored).to.deep.include({
      question: 'Colour?',
      options: ['Red', 'Blue'],
      secret: secret.toString('base64'),
      fromMe: true,
      creators: [],
    });
    expect(h.store.data.has(POLL_PREFIX + '3EB0POLL0002')).to.equal(true);
  });

  it('poll: a maxAnswer beyond the options is refused before anything is sent', async () => {
    const h = await connectedSession();
    const err = (await h.session.messages
      .sendContent(PEER, { kind: 'poll', question: 'Q', options: ['a', 'b'], maxAnswer: 3 })
      .catch((e: unknown) => e)) as AppError;
    expect(err.code).to.equal(ErrorCode.InvalidInput);
    expect(sentOf(h)).to.have.length(0);
  });

  it('reaction: react with the emoji and the key of the message (its author in a group)', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(
      GROUP,
      { kind: 'reaction', emoji: '👍', target: { id: 'M1', chatJid: GROUP, fromMe: false, participant: PEER } },
      { messageId: '3EB0REACT' },
    );
    await h.session.messages.sendContent(PEER, {
      kind: 'reaction',
      emoji: '',
      target: { id: 'M2', chatJid: PEER, fromMe: true },
    });
    expect(sentOf(h)).to.deep.equal([
      [
        GROUP,
        { react: { text: '👍', key: { remoteJid: GROUP, id: 'M1', fromMe: false, participant: PEER } } },
        { messageId: '3EB0REACT' },
      ],
      [PEER, { react: { text: '', key: { remoteJid: PEER, id: 'M2', fromMe: true } } }, undefined],
    ]);
  });

  it('edit: the new text with the edited message as `edit` key', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'edit',
      text: 'fixed',
      target: { id: 'M3', chatJid: PEER, fromMe: true },
    });
    expect(sentOf(h)).to.deep.equal([
      [PEER, { text: 'fixed', edit: { remoteJid: PEER, id: 'M3', fromMe: true } }, undefined],
    ]);
  });

  it('forward: text, or media with the text as caption, marked isForwarded with forwardingScore 1', async () => {
    const h = await connectedSession();
    const data = Buffer.from('jpeg');
    await h.session.messages.sendContent(PEER, { kind: 'forward', text: 'look at this' });
    await h.session.messages.sendContent(PEER, {
      kind: 'forward',
      text: 'the menu',
      media: { kind: 'image', data, mimetype: 'image/jpeg' },
    });
    await h.session.messages.sendContent(PEER, {
      kind: 'forward',
      text: '',
      media: { kind: 'audio', data, mimetype: 'audio/ogg; codecs=opus', ptt: true },
    });
    const forwarded = { isForwarded: true, forwardingScore: 1 };
    expect(sentOf(h).map((c) => c[1])).to.deep.equal([
      { text: 'look at this', contextInfo: forwarded },
      { image: data, mimetype: 'image/jpeg', caption: 'the menu', contextInfo: forwarded },
      { audio: data, mimetype: 'audio/ogg; codecs=opus', ptt: true, contextInfo: forwarded },
    ]);
  });

  it('event: an eventMessage in seconds with its secret, relayed with meta event_type=creation', async () => {
    const h = await connectedSession();
    const sent = await h.session.messages.sendContent(
      PEER,
      {
        kind: 'event',
        event: {
          name: 'Launch',
          description: 'Drinks',
          startAt: 1_900_000_000_500,
          endAt: 1_900_003_600_000,
          location: 'Rooftop',
          joinLink: 'https://call.whatsapp.com/video/TOK',
        },
      },
      { messageId: '3EB0EVENT' },
    );
    const [[jid, message, options]] = relayedOf(h) as [Relayed];
    expect(jid).to.equal(PEER);
    expect(sent.messageId).to.equal('3EB0EVENT');
    expect(options.messageId).to.equal('3EB0EVENT');
    expect(message.eventMessage).to.deep.equal({
      name: 'Launch',
      description: 'Drinks',
      location: { name: 'Rooftop' },
      joinLink: 'https://call.whatsapp.com/video/TOK',
      startTime: 1_900_000_000,
      endTime: 1_900_003_600,
      isCanceled: false,
      extraGuestsAllowed: false,
    });
    expect(message.messageContextInfo!.messageSecret).to.have.length(32);
    expect(options.additionalNodes).to.deep.equal([{ tag: 'meta', attrs: { event_type: 'creation' } }]);
  });

  it('buttons: header text, uploaded header image and footer around the native-flow buttons', async () => {
    const h = await connectedSession();
    const data = Buffer.from('not really a jpeg');
    await h.session.messages.sendContent(
      PEER,
      {
        kind: 'buttons',
        text: 'Pick one',
        header: 'Menu',
        footer: 'Shop',
        media: { kind: 'image', data, mimetype: 'image/jpeg', caption: 'ignored' },
        buttons: [
          { type: 'reply', id: 'yes', label: 'Yes' },
          { type: 'url', url: 'https://example.com', label: 'Site' },
        ],
      },
      { replyTo: REPLY_TO },
    );
    const uploads = h.factory.last.callsOf('waUploadToServer').map(([u]) => u as Record<string, unknown>);
    expect(uploads.map((u) => u.mediaType)).to.deep.equal(['image']);
    const [[, message, options]] = relayedOf(h) as [Relayed];
    expect(options.additionalNodes).to.deep.equal(BIZ_NODES);
    const interactive = interactiveOf(message);
    expect(interactive.body).to.deep.equal({ text: 'Pick one' });
    expect(interactive.footer).to.deep.equal({ text: 'Shop' });
    const header = interactive.header!;
    expect(header.title).to.equal('Menu');
    expect(header.hasMediaAttachment).to.equal(true);
    const image = header.imageMessage!;
    expect(image.url).to.equal('https://mmg.example.net/upload/1');
    expect(image.directPath).to.equal('/upload/1');
    expect(image.mimetype).to.equal('image/jpeg');
    expect(image.caption).to.not.be.ok;
    expect(Buffer.from(image.fileSha256!).equals(sha256(data))).to.equal(true);
    expect(image.mediaKey).to.have.length(32);
    expect(buttonsOf(interactive.nativeFlowMessage)).to.deep.equal([
      ['quick_reply', { display_text: 'Yes', id: 'yes' }],
      ['cta_url', { display_text: 'Site', url: 'https://example.com', merchant_url: 'https://example.com' }],
    ]);
    // A reply quotes its message inside the interactive message.
    expect(interactive.contextInfo).to.deep.include({ stanzaId: 'Q1', participant: PEER });
    expect(interactive.contextInfo!.quotedMessage!.conversation).to.equal('which one?');
  });

  it('buttons: text only has no header, and audio cannot be a header', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(PEER, {
      kind: 'buttons',
      text: 'Hi',
      buttons: [{ type: 'reply', id: 'a', label: 'A' }],
    });
    const interactive = interactiveOf(relayedOf(h)[0]![1]);
    expect(Object.keys(interactive).sort()).to.deep.equal(['body', 'nativeFlowMessage']);
    const err = (await h.session.messages
      .sendContent(PEER, {
        kind: 'buttons',
        text: 'Hi',
        media: { kind: 'audio', data: Buffer.from('x'), mimetype: 'audio/ogg' },
        buttons: [{ type: 'reply', id: 'a', label: 'A' }],
      })
      .catch((e: unknown) => e)) as AppError;
    expect(err.code).to.equal(ErrorCode.InvalidInput);
    expect(h.factory.last.callsOf('waUploadToServer')).to.have.length(0);
  });

  it('list: a native-flow single_select with the button text, sections and rows', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(
      GROUP,
      {
        kind: 'list',
        text: 'Our menu',
        buttonText: 'See options',
        header: 'Lunch',
        footer: 'Until 3pm',
        sections: [
          {
            title: 'Mains',
            rows: [
              { id: 'm1', title: 'Pasta', description: 'Fresh' },
              { id: 'm2', title: 'Rice' },
            ],
          },
          { title: 'Drinks', rows: [{ id: 'd1', title: 'Juice' }] },
        ],
      },
      { messageId: '3EB0LIST' },
    );
    const [[jid, message, options]] = relayedOf(h) as [Relayed];
    expect(jid).to.equal(GROUP);
    expect(options.messageId).to.equal('3EB0LIST');
    expect(options.additionalNodes.map((n) => n.tag)).to.deep.equal(['biz']);
    const interactive = interactiveOf(message);
    expect(interactive.header).to.deep.equal({ title: 'Lunch', hasMediaAttachment: false });
    expect(interactive.body).to.deep.equal({ text: 'Our menu' });
    expect(interactive.footer).to.deep.equal({ text: 'Until 3pm' });
    expect(buttonsOf(interactive.nativeFlowMessage)).to.deep.equal([
      [
        'single_select',
        {
          title: 'See options',
          sections: [
            {
              title: 'Mains',
              rows: [
                { id: 'm1', title: 'Pasta', description: 'Fresh' },
                { id: 'm2', title: 'Rice' },
              ],
            },
            { title: 'Drinks', rows: [{ id: 'd1', title: 'Juice' }] },
          ],
        },
      ],
    ]);
  });

  it('carousel: cards with uploaded image/video headers, body, footer and their buttons', async () => {
    const h = await connectedSession();
    const image = Buffer.from('card image');
    const video = Buffer.from('card video');
    await h.session.messages.sendContent(PEER, {
      kind: 'carousel',
      text: 'New arrivals',
      footer: 'Tap a card',
      cards: [
        {
          title: 'Shoes',
          subtitle: 'Running',
          media: { kind: 'image', data: image, mimetype: 'image/jpeg' },
          body: 'R$ 199',
          footer: 'In stock',
          buttons: [
            { type: 'reply', id: 'buy-shoes', label: 'Buy' },
            { type: 'copy', code: 'SHOES10', label: 'Coupon' },
          ],
        },
        {
          title: 'Tour',
          media: { kind: 'video', data: video, mimetype: 'video/mp4' },
          body: 'See it',
          buttons: [{ type: 'url', url: 'https://example.com/tour', label: 'Open' }],
        },
        { title: 'Plain', body: 'No media', buttons: [{ type: 'call', phoneNumber: '+5511999', label: 'Call' }] },
      ],
    });
    const uploads = h.factory.last.callsOf('waUploadToServer').map(([u]) => (u as { mediaType: string }).mediaType);
    expect(uploads.sort()).to.deep.equal(['image', 'video']);
    const [[, message, options]] = relayedOf(h) as [Relayed];
    expect(options.additionalNodes).to.deep.equal(BIZ_NODES);
    const interactive = interactiveOf(message);
    expect(interactive.body).to.deep.equal({ text: 'New arrivals' });
    expect(interactive.footer).to.deep.equal({ text: 'Tap a card' });
    expect(interactive.carouselMessage!.messageVersion).to.equal(1);
    const [shoes, tour, plain] = interactive.carouselMessage!.cards!;
    expect(shoes!.header).to.deep.include({ title: 'Shoes', subtitle: 'Running', hasMediaAttachment: true });
    expect(Buffer.from(shoes!.header!.imageMessage!.fileSha256!).equals(sha256(image))).to.equal(true);
    expect(shoes!.body).to.deep.equal({ text: 'R$ 199' });
    expect(shoes!.footer).to.deep.equal({ text: 'In stock' });
    expect(buttonsOf(shoes!.nativeFlowMessage)).to.deep.equal([
      ['quick_reply', { display_text: 'Buy', id: 'buy-shoes' }],
      ['cta_copy', { display_text: 'Coupon', copy_code: 'SHOES10' }],
    ]);
    expect(tour!.header).to.deep.include({ title: 'Tour', hasMediaAttachment: true });
    expect(tour!.header!.videoMessage!.mimetype).to.equal('video/mp4');
    expect(Buffer.from(tour!.header!.videoMessage!.fileSha256!).equals(sha256(video))).to.equal(true);
    expect(plain!.header).to.deep.equal({ title: 'Plain', hasMediaAttachment: false });
    expect(buttonsOf(plain!.nativeFlowMessage)).to.deep.equal([
      ['cta_call', { display_text: 'Call', phone_number: '+5511999' }],
    ]);
  });

  it('carousel: a card with more than 3 buttons is refused', async () => {
    const h = await connectedSession();
    const buttons = ['a', 'b', 'c', 'd'].map((id) => ({ type: 'reply' as const, id, label: id }));
    const err = (await h.session.messages
      .sendContent(PEER, { kind: 'carousel', cards: [{ title: 'T', body: 'B', buttons }] })
      .catch((e: unknown) => e)) as AppError;
    expect(err.code).to.equal(ErrorCode.InvalidInput);
    expect(relayedOf(h)).to.have.length(0);
  });

  it('sendChatPresence: recording reaches sendPresenceUpdate', async () => {
    const h = await connectedSession();
    await h.session.messages.sendChatPresence(PEER, 'recording');
    expect(h.factory.last.callsOf('sendPresenceUpdate')).to.deep.equal([['recording', PEER]]);
  });
});

describe('BaileysSession: receiving the message kinds', () => {
  it('contactMessage: the card read from its vCard (waid, escapes, folded lines, grouped properties)', async () => {
    const h = await connectedSession();
    const vcard = [
      'BEGIN:VCARD',
      'VERSION:3.0',
      'N:Souza;Ana;;;',
      'FN:Ana Souza\\, MD',
      'ORG:Acme\\; Inc;Sales',
      'item1.TEL;type=CELL;waid=5511988887777:+55 11 98888-7777',
      'item1.X-ABLabel:Mobile',
      'EMAIL;type=INTERNET:ana@exa',
      ' mple.com',
      'item2.URL:https\\://example.com',
      'END:VCARD',
    ].join('\r\n');
    const [msg] = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'C1', fromMe: false },
        message: { contactMessage: { displayName: 'Ana', vcard } },
        messageTimestamp: 10,
      },
    ]);
    expect(msg).to.deep.include({
      type: 'contact',
      text: 'Ana Souza, MD',
      contacts: [
        {
          fullName: 'Ana Souza, MD',
          phone: '5511988887777',
          organization: 'Acme; Inc',
          email: 'ana@example.com',
          url: 'https://example.com',
        },
      ],
    });
  });

  it('contactsArrayMessage: every card, the phone from TEL digits without waid, names joined', async () => {
    const h = await connectedSession();
    const [msg] = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'C2', fromMe: false },
        message: {
          contactsArrayMessage: {
            displayName: '2 contacts',
            contacts: [
              { displayName: 'Ana', vcard: 'BEGIN:VCARD\nVERSION:3.0\nFN:Ana\nTEL:+55 (11) 91111-2222\nEND:VCARD' },
              { displayName: 'Bia', vcard: 'BEGIN:VCARD\nVERSION:3.0\nTEL;waid=5511933334444:+55 11\nEND:VCARD' },
            ],
          },
        },
      },
    ]);
    expect(msg!.type).to.equal('contact');
    expect(msg!.text).to.equal('Ana, Bia');
    expect(msg!.contacts).to.deep.equal([
      { fullName: 'Ana', phone: '5511911112222' },
      { fullName: 'Bia', phone: '5511933334444' },
    ]);
  });

  it('reactionMessage: the reacted message id and the emoji (empty when withdrawn)', async () => {
    const h = await connectedSession();
    const msgs = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'R1', fromMe: false },
        message: { reactionMessage: { text: '❤️', key: { remoteJid: PEER, id: 'M9', fromMe: true } } },
      },
      {
        key: { remoteJid: PEER, id: 'R2', fromMe: false },
        message: { reactionMessage: { text: '', key: { remoteJid: PEER, id: 'M9', fromMe: true } } },
      },
    ]);
    expect(msgs.map((m) => [m.type, m.text, m.reaction])).to.deep.equal([
      ['reaction', '❤️', { messageId: 'M9', emoji: '❤️' }],
      ['reaction', '', { messageId: 'M9', emoji: '' }],
    ]);
  });

  it('pollCreationMessage, V2 and V3: question, options and maxAnswer (0 selectable means all)', async () => {
    const h = await connectedSession();
    const options = [{ optionName: 'Red' }, { optionName: 'Blue' }, { optionName: 'Green' }];
    const msgs = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'P1', fromMe: false },
        message: { pollCreationMessage: { name: 'Colours?', options, selectableOptionsCount: 0 } },
      },
      {
        key: { remoteJid: PEER, id: 'P2', fromMe: false },
        message: { pollCreationMessageV2: { name: 'Two?', options, selectableOptionsCount: 2 } },
      },
      {
        key: { remoteJid: PEER, id: 'P3', fromMe: false },
        message: { pollCreationMessageV3: { name: 'One?', options, selectableOptionsCount: 1 } },
      },
    ]);
    const names = ['Red', 'Blue', 'Green'];
    expect(msgs.map((m) => [m.type, m.text, m.poll])).to.deep.equal([
      ['poll', 'Colours?', { question: 'Colours?', options: names, maxAnswer: 3 }],
      ['poll', 'Two?', { question: 'Two?', options: names, maxAnswer: 2 }],
      ['poll', 'One?', { question: 'One?', options: names, maxAnswer: 1 }],
    ]);
  });

  it('pollUpdateMessage: a vote on our poll, encrypted by the voter, is read back to option names', async () => {
    const h = await connectedSession();
    await h.session.messages.sendContent(
      PEER,
      { kind: 'poll', question: 'Colour?', options: ['Red', 'Blue', 'Green'], maxAnswer: 0 },
      { messageId: '3EB0POLLVOTE' },
    );
    const [[, content]] = sentOf(h) as [Sent];
    const secret = Buffer.from((content.poll as { messageSecret: Uint8Array }).messageSecret);
    const poll = { id: '3EB0POLLVOTE', secret, creatorJid: OWN_JID };
    const [vote, withdrawn] = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'V1', fromMe: false },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER, id: '3EB0POLLVOTE', fromMe: true },
            vote: encryptVote(['Green', 'Red'], poll, PEER),
            senderTimestampMs: 1_700_000_000_000,
          },
        },
        messageTimestamp: 1_700_000_000,
      },
      {
        key: { remoteJid: PEER, id: 'V2', fromMe: false },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER, id: '3EB0POLLVOTE', fromMe: true },
            vote: encryptVote([], poll, PEER),
          },
        },
      },
    ]);
    expect(vote).to.deep.include({
      type: 'poll_vote',
      text: 'Green, Red',
      pollVote: { pollId: '3EB0POLLVOTE', options: ['Green', 'Red'] },
    });
    expect(withdrawn!.pollVote).to.deep.equal({ pollId: '3EB0POLLVOTE', options: [] });
  });

  it('pollUpdateMessage: a group poll received from a LID member, voted on by LID: the addresses are tried', async () => {
    const h = await connectedSession();
    const secret = randomBytes(32);
    const creator = { participant: '99887766@lid', participantAlt: '5511977776666@s.whatsapp.net' };
    const [created] = await receive(h, [
      {
        key: { remoteJid: GROUP, id: 'GP1', fromMe: false, ...creator },
        message: {
          messageContextInfo: { messageSecret: secret },
          pollCreationMessageV3: { name: 'Lunch?', options: [{ optionName: 'Yes' }, { optionName: 'No' }] },
        },
      },
    ]);
    expect(created!.poll).to.deep.equal({ question: 'Lunch?', options: ['Yes', 'No'], maxAnswer: 2 });
    const poll = { id: 'GP1', secret, creatorJid: '99887766@lid' };
    const [vote] = await receive(h, [
      {
        key: { remoteJid: GROUP, id: 'GV1', fromMe: false, participant: PEER, participantAlt: PEER_LID },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: GROUP, id: 'GP1', fromMe: false, participant: '99887766@lid' },
            vote: encryptVote(['No'], poll, PEER_LID),
          },
        },
      },
    ]);
    expect(vote!.pollVote).to.deep.equal({ pollId: 'GP1', options: ['No'] });
    expect(vote!.sender.jid).to.equal(PEER);
  });

  it('pollUpdateMessage: our poll is still known after a restart (the poll book is stored with the link)', async () => {
    const first = await connectedSession();
    await first.session.messages.sendContent(
      PEER,
      { kind: 'poll', question: 'Again?', options: ['Yes', 'No'], maxAnswer: 1 },
      { messageId: '3EB0KEPT' },
    );
    const [[, content]] = sentOf(first) as [Sent];
    const secret = Buffer.from((content.poll as { messageSecret: Uint8Array }).messageSecret);
    await first.session.close();
    const h = await connectedSession({ store: first.store });
    const [vote] = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'V3', fromMe: false },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER, id: '3EB0KEPT', fromMe: true },
            vote: encryptVote(['Yes'], { id: '3EB0KEPT', secret, creatorJid: OWN_LID }, PEER),
          },
        },
      },
    ]);
    expect(vote!.pollVote).to.deep.equal({ pollId: '3EB0KEPT', options: ['Yes'] });
  });

  it('pollUpdateMessage: a vote on an unknown poll has no options and is logged, and later messages still map', async () => {
    const { log, lines } = capturingLog();
    const h = await connectedSession({ log });
    const msgs = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'V4', fromMe: false },
        message: {
          pollUpdateMessage: {
            pollCreationMessageKey: { remoteJid: PEER, id: 'NOPE', fromMe: true },
            vote: { encPayload: randomBytes(40), encIv: randomBytes(12) },
          },
        },
      },
      { key: { remoteJid: PEER, id: 'T1', fromMe: false }, message: { conversation: 'after' } },
    ]);
    expect(msgs.map((m) => [m.type, m.pollVote])).to.deep.equal([
      ['poll_vote', { pollId: 'NOPE', options: [] }],
      ['text', undefined],
    ]);
    expect(lines.some((l) => l.pollId === 'NOPE' && /unknown poll/.test(String(l.msg)))).to.equal(true);
  });

  it('eventMessage: name, description, times in ms, location and join link', async () => {
    const h = await connectedSession();
    const [msg] = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'EV1', fromMe: false },
        message: {
          eventMessage: {
            name: 'Launch',
            description: 'Drinks',
            location: { name: 'Rooftop', degreesLatitude: 0, degreesLongitude: 0 },
            joinLink: 'https://call.whatsapp.com/voice/T',
            startTime: 1_900_000_000,
            endTime: 1_900_003_600,
          },
        },
      },
    ]);
    expect(msg).to.deep.include({
      type: 'event',
      text: 'Launch',
      event: {
        name: 'Launch',
        description: 'Drinks',
        startAt: 1_900_000_000_000,
        endAt: 1_900_003_600_000,
        location: 'Rooftop',
        joinLink: 'https://call.whatsapp.com/voice/T',
      },
    });
  });

  it('list replies (legacy and native-flow single_select) are list_response; quick replies stay buttons', async () => {
    const h = await connectedSession();
    const msgs = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'L1', fromMe: false },
        message: { listResponseMessage: { title: 'Pasta', singleSelectReply: { selectedRowId: 'm1' } } },
      },
      {
        key: { remoteJid: PEER, id: 'L2', fromMe: false },
        message: {
          interactiveResponseMessage: {
            body: { text: 'Rice' },
            nativeFlowResponseMessage: { name: 'single_select', paramsJson: '{"id":"m2"}', version: 3 },
          },
        },
      },
      {
        key: { remoteJid: PEER, id: 'B1', fromMe: false },
        message: {
          interactiveResponseMessage: {
            body: { text: 'Yes' },
            nativeFlowResponseMessage: { name: 'quick_reply', paramsJson: '{"id":"yes"}', version: 1 },
          },
        },
      },
    ]);
    expect(msgs.map((m) => [m.type, m.text, m.selectedRowId, m.selectedButtonId])).to.deep.equal([
      ['list_response', 'Pasta', 'm1', undefined],
      ['list_response', 'Rice', 'm2', undefined],
      ['buttons_response', 'Yes', undefined, 'yes'],
    ]);
  });

  it('protocolMessage: MESSAGE_EDIT is an edit with the new text, REVOKE a revoked message; others stay silent', async () => {
    const h = await connectedSession();
    const { Type } = proto.Message.ProtocolMessage;
    const msgs = await receive(h, [
      {
        // Edits arrive wrapped in `editedMessage`.
        key: { remoteJid: PEER, id: 'X1', fromMe: false },
        message: {
          editedMessage: {
            message: {
              protocolMessage: {
                key: { remoteJid: PEER, id: 'M5', fromMe: false },
                type: Type.MESSAGE_EDIT,
                editedMessage: { conversation: 'see you at 8' },
                timestampMs: 1_700_000_000_000,
              },
            },
          },
        },
      },
      {
        key: { remoteJid: PEER, id: 'X2', fromMe: false },
        message: {
          protocolMessage: {
            key: { remoteJid: PEER, id: 'M6', fromMe: false },
            type: Type.MESSAGE_EDIT,
            editedMessage: { imageMessage: { caption: 'new caption' } },
          },
        },
      },
      {
        key: { remoteJid: PEER, id: 'X3', fromMe: false },
        message: { protocolMessage: { key: { remoteJid: PEER, id: 'M7', fromMe: false }, type: Type.REVOKE } },
      },
      {
        key: { remoteJid: PEER, id: 'X4', fromMe: false },
        message: { protocolMessage: { type: Type.EPHEMERAL_SETTING, ephemeralExpiration: 86_400 } },
      },
      {
        key: { remoteJid: PEER, id: 'X5', fromMe: false },
        message: { protocolMessage: { type: Type.HISTORY_SYNC_NOTIFICATION, key: { id: 'H1' } } },
      },
    ]);
    expect(msgs.map((m) => [m.id, m.type, m.text, m.edit, m.revoked])).to.deep.equal([
      ['X1', 'edit', 'see you at 8', { messageId: 'M5', text: 'see you at 8' }, undefined],
      ['X2', 'edit', 'new caption', { messageId: 'M6', text: 'new caption' }, undefined],
      ['X3', 'revoked', '', undefined, { messageId: 'M7' }],
    ]);
  });

  it('contextInfo.isForwarded marks text and media as forwarded', async () => {
    const h = await connectedSession();
    const msgs = await receive(h, [
      {
        key: { remoteJid: PEER, id: 'F1', fromMe: false },
        message: { extendedTextMessage: { text: 'fwd', contextInfo: { isForwarded: true, forwardingScore: 1 } } },
      },
      {
        key: { remoteJid: PEER, id: 'F2', fromMe: false },
        message: { imageMessage: { mimetype: 'image/jpeg', contextInfo: { isForwarded: true, forwardingScore: 5 } } },
      },
      { key: { remoteJid: PEER, id: 'F3', fromMe: false }, message: { conversation: 'mine' } },
    ]);
    expect(msgs.map((m) => [m.id, m.forwarded])).to.deep.equal([
      ['F1', true],
      ['F2', true],
      ['F3', undefined],
    ]);
  });
});

describe('PollBook', () => {
  /** The session's storage of link keys, over an in-memory AuthStore. */
  function storageOf(store: MemoryAuthStore) {
    return {
      list: (prefix: string) => store.list(prefix),
      write: async (build: () => Record<string, string | null>) => store.set(build()),
      read: (keys: string[]) => store.getMany(keys),
    };
  }

  const poll = (question: string) => ({
    question,
    options: ['a', 'b'],
    secret: randomBytes(32),
    fromMe: true,
    creators: [],
  });

  it('keeps the newest polls only, in memory and in the store, and loads them back in order', async () => {
    const store = new MemoryAuthStore();
    let now = 1_000;
    const book = await PollBook.load(storageOf(store), silentLog, { max: 2, now: () => now++ });
    book.remember('A', poll('first'));
    book.remember('B', poll('second'));
    book.remember('C', poll('third'));
    expect([book.get('A'), book.get('B')?.question, book.get('C')?.question]).to.deep.equal([
      undefined,
      'second',
      'third',
    ]);
    expect([...store.data.keys()].sort()).to.deep.equal([POLL_PREFIX + 'B', POLL_PREFIX + 'C']);
    const smaller = await PollBook.load(storageOf(store), silentLog, { max: 1 });
    expect([smaller.size, smaller.get('C')?.question]).to.deep.equal([1, 'third']);
    expect(smaller.get('C')!.secret.equals(book.get('C')!.secret)).to.equal(true);
  });
});
