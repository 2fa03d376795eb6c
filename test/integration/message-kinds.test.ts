import { expect } from 'chai';
import sharp from 'sharp';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { hashToken } from '../../src/security/tokens.js';
import { pngImage, startFileServer, wavTone } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const ALICE = '5511810000001';
const BOB = '5511810000002';
const CAROL = '5511810000003';
const ALICE_JID = `${ALICE}@s.whatsapp.net`;
const BOB_JID = `${BOB}@s.whatsapp.net`;
/** A CPF with valid check digits (the documented example of the format). */
const CPF = '529.982.247-25';

describe('message kinds: sticker, contact, pix, buttons, list, carousel, poll, event, reaction, edit, forward', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let server: FileServer;
  let alice: string;
  let bob: string;
  let carol: string;
  let bobEvents: EventEnvelope[];
  let aliceEvents: EventEnvelope[];

  const send = (kind: string, body: unknown, name = 'alice', token = alice) =>
    n.node.api.post(`/api/message/${kind}/${name}`, body, { token });
  const inbound = (body: Record<string, unknown>, name = 'alice', token = alice) =>
    n.node.api.post(`/api/sandbox/inbound/${name}`, body, { token });
  const lastOut = async (to = BOB) => (await n.outbox('alice', alice, to)).at(-1);
  /** The message.exchange of `id` among `events`, once it arrives. */
  const exchanged = async (events: EventEnvelope[], id: string) => {
    const find = () => events.find((e) => e.event === 'message.exchange' && (e.data as any).id === id);
    for (let i = 0; i < 150 && !find(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(find(), `message.exchange of ${id}`).to.not.equal(undefined);
    return (find()!.data as any).message;
  };

  before(async () => {
    [n, server] = await Promise.all([startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }), startFileServer()]);
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    carol = await n.linked('carol', CAROL);
    server.serve('/photo.png', await pngImage(300, 200), 'image/png');
    server.serve('/tone.wav', wavTone(1), 'audio/wav');
    bobEvents = await n.record(bob);
    aliceEvents = await n.record(alice);
  });

  after(async () => {
    await Promise.all([n?.stop(), server?.close()]);
  });

  it('sticker: any image becomes a 512×512 WebP, by URL or data: URI; the recipient gets a sticker', async () => {
    const res = await send('sticker', { number: BOB, imageUrl: server.url('/photo.png') });
    expectOk(res);
    expect(res.body.data.messageType).to.equal('sticker');
    const out = await lastOut();
    expect(out).to.deep.include({ type: 'media', messageId: res.body.data.messageId });
    expect(out.media).to.deep.include({ kind: 'sticker', mimetype: 'image/webp' });
    expect((await exchanged(bobEvents, res.body.data.messageId)).type).to.equal('sticker');

    const png = await pngImage(40, 80);
    const dataUri = await send('sticker', { number: BOB, imageUrl: `data:image/png;base64,${png.toString('base64')}` });
    expectOk(dataUri);
    const size = (await lastOut()).media.size as number;
    expect(size).to.be.greaterThan(0);

    expectError(await send('sticker', { number: BOB }), 400, 'imageUrl is required');
    expectError(
      await send('sticker', { number: BOB, imageUrl: `data:image/png;base64,${Buffer.from('no').toString('base64')}` }),
      400,
      'The media is not an image',
    );
  });

  it('sticker: the WebP is 512×512 with the image fitted inside', async () => {
    const { toSticker } = await import('../../src/media/image.js');
    const webp = await toSticker(await pngImage(300, 100));
    const meta = await sharp(webp).metadata();
    expect(meta).to.deep.include({ format: 'webp', width: 512, height: 512, hasAlpha: true });
  });

  it('contact: one card or several; the recipient receives them typed', async () => {
    const card = {
      fullName: 'Dora Lima',
      phone: '+5511987654321',
      organization: 'Lima & Co',
      email: 'dora@example.com',
    };
    const res = await send('contact', { number: BOB, vcard: [card, { fullName: 'Edu', phone: '551133334444' }] });
    expectOk(res);
    expect(res.body.message).to.equal('2 contacts sent successfully in one message');
    expect(res.body.data.content).to.equal('Dora Lima, Edu');
    expect(res.body.data.vcard).to.deep.equal([card, { fullName: 'Edu', phone: '551133334444' }]);
    const out = await lastOut();
    expect(out.type).to.equal('contact');
    expect(out.contacts[0]).to.deep.equal({ ...card, phone: '5511987654321' });
    const received = await exchanged(bobEvents, res.body.data.messageId);
    expect(received.type).to.equal('contact');
    expect(received.contacts[0]).to.deep.equal({ ...card, phone: '5511987654321', url: null });
    expect(received.contacts[1]).to.deep.include({ fullName: 'Edu', organization: null });

    expectOk(await send('contact', { number: BOB, vcard: { fullName: 'Solo', phone: '5511900001111' } }));
    expectError(await send('contact', { number: BOB }), 400, 'vcard is required');
    const bad = await send('contact', { number: BOB, vcard: [{ fullName: 'X', phone: '123' }] });
    expect(bad.status).to.equal(400);
    expect(bad.body.error.message).to.match(/vcard.*phone/);
    const many = Array.from({ length: 11 }, (_, i) => ({ fullName: `P${i}`, phone: `55119000000${10 + i}` }));
    expectError(
      await send('contact', { number: BOB, vcard: many }),
      400,
      'Invalid request body: vcard takes 1 to 10 items',
    );
  });

  it('pix: the key is checked for its type before the card is sent', async () => {
    const res = await send('pix', { number: BOB, merchantName: 'Loja da Dora', pixKey: CPF, pixKeyType: 'CPF' });
    expectOk(res);
    expect(await lastOut()).to.deep.include({
      type: 'payment',
      payment: { merchantName: 'Loja da Dora', key: CPF, keyType: 'CPF' },
    });
    expect((await exchanged(bobEvents, res.body.data.messageId)).type).to.equal('payment');
    for (const [pixKeyType, pixKey, problem] of [
      ['CPF', '529.982.247-24', 'the CPF check digits do not match'],
      ['CNPJ', '123', 'a CNPJ key has 14 digits'],
      ['EMAIL', 'not-an-email', 'an EMAIL key is an e-mail address'],
      ['PHONE', '11999998888', 'a PHONE key is +<country code><number>, e.g. +5511999998888'],
      ['RANDOM', 'abc', 'a RANDOM key is a UUID'],
    ]) {
      expectError(
        await send('pix', { number: BOB, merchantName: 'Loja', pixKey, pixKeyType }),
        400,
        `Invalid request body: pixKey: ${problem}`,
      );
    }
    expectOk(
      await send('pix', { number: BOB, merchantName: 'Loja', pixKey: '11.222.333/0001-81', pixKeyType: 'CNPJ' }),
    );
    expectOk(
      await send('pix', {
        number: BOB,
        merchantName: 'Loja',
        pixKey: '123e4567-e89b-42d3-a456-426614174000',
        pixKeyType: 'RANDOM',
      }),
    );
    const badType = await send('pix', { number: BOB, merchantName: 'Loja', pixKey: CPF, pixKeyType: 'IBAN' });
    expect(badType.status).to.equal(400);
    expect(badType.body.error.message).to.include('pixKeyType');
  });

  it('buttons (and the plural alias): four types, an image header; counts, ids and links checked', async () => {
    const buttons = [
      { id: 'yes', displayText: 'Yes' },
      { id: 'https://example.com/terms', displayText: 'Terms', type: 'URL' },
      { id: '+5511999998888', displayText: 'Call us', type: 'CALL' },
    ];
    const res = await send('button', {
      number: BOB,
      contentText: 'Accept?',
      headerText: 'Terms',
      footerText: 'Reply below',
      buttons,
      mediaUrl: server.url('/photo.png'),
    });
    expectOk(res);
    const out = await lastOut();
    expect(out).to.deep.include({ type: 'buttons', text: 'Accept?', header: 'Terms', footer: 'Reply below' });
    expect(out.buttons).to.deep.equal([
      { type: 'reply', id: 'yes', label: 'Yes' },
      { type: 'url', url: 'https://example.com/terms', label: 'Terms' },
      { type: 'call', phoneNumber: '+5511999998888', label: 'Call us' },
    ]);
    expect(out.media).to.deep.include({ kind: 'image', mimetype: 'image/jpeg' });
    expect(await exchanged(bobEvents, res.body.data.messageId)).to.deep.include({
      type: 'interactive',
      content: { text: 'Accept?' },
    });

    const copy = await send('buttons', {
      number: BOB,
      contentText: 'Your code',
      buttons: [{ id: 'XK-42', displayText: 'Copy code', type: 'COPY' }],
    });
    expectOk(copy);
    expect((await lastOut()).buttons).to.deep.equal([{ type: 'copy', code: 'XK-42', label: 'Copy code' }]);

    const four = [...buttons, { id: 'no', displayText: 'No' }];
    expectError(
      await send('button', { number: BOB, contentText: 'x', buttons: four }),
      400,
      'Invalid request body: buttons takes 1 to 3 items',
    );
    expectError(
      await send('button', { number: BOB, contentText: 'x', buttons: [buttons[0], buttons[0]] }),
      400,
      'Invalid request body: buttons ids must be unique',
    );
    expectError(
      await send('button', {
        number: BOB,
        contentText: 'x',
        buttons: [{ id: 'http://a.b', displayText: 'a', type: 'URL' }],
      }),
      400,
      "Invalid request body: buttons[0]: a URL button's id is an https link",
    );
    expectError(
      await send('button', {
        number: BOB,
        contentText: 'x',
        buttons: [{ id: '1199', displayText: 'a', type: 'CALL' }],
      }),
      400,
      "Invalid request body: buttons[0]: a CALL button's id is +<country code><number>",
    );
    expectError(await send('button', { number: BOB, buttons }), 400, 'contentText is required');
  });

  it('list: sections of rows; a chosen row comes back as list_response', async () => {
    const sections = [
      {
        title: 'Pizzas',
        rows: [
          { id: 'p1', title: 'Margherita', description: 'Tomato, basil' },
          { id: 'p2', title: 'Calabresa' },
        ],
      },
      { title: 'Drinks', rows: [{ id: 'd1', title: 'Water' }] },
    ];
    const res = await send('list', { number: BOB, contentText: 'Menu', buttonText: 'Open menu', sections });
    expectOk(res);
    expect(await lastOut()).to.deep.include({
      type: 'list',
      text: 'Menu',
      list: { buttonText: 'Open menu', sections },
    });

    const chosen = await inbound({ from: BOB, listReplyId: 'p2', text: 'Calabresa' });
    expectOk(chosen);
    const received = await exchanged(aliceEvents, chosen.body.messageId);
    expect(received).to.deep.include({
      type: 'list_response',
      content: { text: 'Calabresa' },
      interactive: { selectedButtonId: null, selectedRowId: 'p2' },
    });

    expectError(
      await send('list', {
        number: BOB,
        contentText: 'x',
        buttonText: 'y',
        sections: [
          { title: 'a', rows: [{ id: 'r', title: 'a' }] },
          { title: 'b', rows: [{ id: 'r', title: 'b' }] },
        ],
      }),
      400,
      'Invalid request body: row ids must be unique',
    );
    const eleven = Array.from({ length: 11 }, (_, i) => ({ id: `r${i}`, title: `Row ${i}` }));
    expectError(
      await send('list', { number: BOB, contentText: 'x', buttonText: 'y', sections: [{ title: 'a', rows: eleven }] }),
      400,
      'Invalid request body: sections[0].rows takes 1 to 10 items',
    );
    expectError(await send('list', { number: BOB, contentText: 'x', sections }), 400, 'buttonText is required');
  });

  it('carousel: cards with an image header and buttons; limits checked', async () => {
    const cards = [
      {
        header: { title: 'Blue shoe', imageUrl: server.url('/photo.png') },
        body: { text: 'Size 38 to 44' },
        footer: 'R$ 199',
        buttons: [{ id: 'buy-blue', displayText: 'Buy' }],
      },
      { header: { title: 'Red shoe', subtitle: 'New' }, body: { text: 'Size 36 to 40' } },
    ];
    const res = await send('carousel', { number: BOB, message: 'Our shoes', cards });
    expectOk(res);
    expect(res.body.data).to.include({ messageType: 'interactive', content: 'Our shoes - Carousel with 2 card(s)' });
    const out = await lastOut();
    expect(out).to.deep.include({ type: 'carousel', text: 'Our shoes' });
    expect(out.carousel).to.have.length(2);
    expect(out.carousel[0]).to.deep.include({ title: 'Blue shoe', body: 'Size 38 to 44', footer: 'R$ 199' });
    expect(out.carousel[0].media).to.deep.include({ kind: 'image', mimetype: 'image/jpeg' });
    expect(out.carousel[1]).to.deep.include({ title: 'Red shoe', subtitle: 'New', buttons: [] });

    const eleven = Array.from({ length: 11 }, () => cards[1]);
    expectError(
      await send('carousel', { number: BOB, cards: eleven }),
      400,
      'Invalid request body: cards takes 1 to 10 items',
    );
    const fourButtons = Array.from({ length: 4 }, (_, i) => ({ id: `b${i}`, displayText: `B${i}` }));
    expectError(
      await send('carousel', { number: BOB, cards: [{ ...cards[1], buttons: fourButtons }] }),
      400,
      'Invalid request body: cards[0].buttons takes 0 to 3 items',
    );
    expectError(
      await send('carousel', {
        number: BOB,
        cards: [
          { ...cards[1], header: { title: 't', imageUrl: server.url('/photo.png'), videoUrl: server.url('/v.mp4') } },
        ],
      }),
      400,
      'Invalid request body: cards[0].header: send imageUrl or videoUrl, not both',
    );
  });

  it("poll: sent with its options; a contact's vote reaches message.exchange as poll_vote", async () => {
    const res = await send('poll', {
      number: BOB,
      question: 'Lunch?',
      options: ['Pizza', 'Sushi', 'Salad'],
      maxAnswer: 2,
    });
    expectOk(res);
    const poll = { question: 'Lunch?', options: ['Pizza', 'Sushi', 'Salad'], maxAnswer: 2 };
    expect(await lastOut()).to.deep.include({ type: 'poll', poll });
    expect(await exchanged(bobEvents, res.body.data.messageId)).to.deep.include({ type: 'poll', poll });

    const vote = await inbound({ from: BOB, pollVote: { pollId: res.body.data.messageId, options: ['Sushi'] } });
    expectOk(vote);
    expect(await exchanged(aliceEvents, vote.body.messageId)).to.deep.include({
      type: 'poll_vote',
      pollVote: { pollId: res.body.data.messageId, options: ['Sushi'] },
    });

    // The hosted product's names, and the default of one answer.
    expectOk(await send('poll', { number: BOB, name: 'Tea?', values: ['Yes', 'No'] }));
    expect((await lastOut()).poll).to.deep.equal({ question: 'Tea?', options: ['Yes', 'No'], maxAnswer: 1 });

    // maxAnswer is normalised as in the hosted product: above the options → their number, below 1 → 1.
    expectOk(await send('poll', { number: BOB, question: 'q', options: ['a', 'b'], maxAnswer: 3 }));
    expect((await lastOut()).poll.maxAnswer).to.equal(2);
    expectOk(await send('poll', { number: BOB, question: 'q', options: ['a', 'b'], maxAnswer: 0 }));
    expect((await lastOut()).poll.maxAnswer).to.equal(1);
    expectError(
      await send('poll', { number: BOB, question: 'q', options: ['a'] }),
      400,
      'Invalid request body: options takes 2 to 12 items',
    );
    expectError(
      await send('poll', { number: BOB, question: 'q', options: ['a', 'a'] }),
      400,
      'Invalid request body: options must be unique',
    );
    expectError(await send('poll', { number: BOB, options: ['a', 'b'] }), 400, 'question is required');
  });

  it('event: RFC 3339 times with a zone, the end after the start', async () => {
    const body = {
      number: BOB,
      name: 'Launch party',
      startAt: '2026-12-01T19:00:00-03:00',
      endAt: '2026-12-01T23:00:00-03:00',
      location: 'Rua Augusta 100',
      joinLink: 'https://call.whatsapp.com/video/abc',
    };
    const res = await send('event', body);
    expectOk(res);
    const received = await exchanged(bobEvents, res.body.data.messageId);
    expect(received).to.deep.include({ type: 'event', content: { text: 'Launch party' } });
    expect(received.event).to.deep.equal({
      name: 'Launch party',
      description: null,
      startAt: '2026-12-01T22:00:00.000Z',
      endAt: '2026-12-02T02:00:00.000Z',
      location: 'Rua Augusta 100',
      joinLink: 'https://call.whatsapp.com/video/abc',
    });
    expectError(
      await send('event', { ...body, endAt: '2026-12-01T18:00:00-03:00' }),
      400,
      'Invalid request body: endAt must be after startAt',
    );
    const noZone = await send('event', { ...body, startAt: '2026-12-01T19:00:00' });
    expect(noZone.status).to.equal(400);
    expect(noZone.body.error.message).to.include('startAt');
    expectError(await send('event', { number: BOB, name: 'x' }), 400, 'startAt is required');
  });

  it('reaction: to a message of the history, removed with an empty emoji; one emoji only', async () => {
    const hello = await inbound({ from: BOB, text: 'hello' });
    expectOk(hello);
    await exchanged(aliceEvents, hello.body.messageId);
    const res = await send('reaction', { messageId: hello.body.messageId, reaction: '👍' });
    expectOk(res);
    expect(res.body.data.to).to.equal(BOB_JID);
    expect(await lastOut()).to.deep.include({
      type: 'reaction',
      reaction: { messageId: hello.body.messageId, emoji: '👍' },
    });
    expect(await exchanged(bobEvents, res.body.data.messageId)).to.deep.include({
      type: 'reaction',
      reaction: { messageId: hello.body.messageId, emoji: '👍' },
    });
    expectOk(await send('reaction', { messageId: hello.body.messageId, reaction: '' }));
    expectOk(await send('reaction', { messageId: hello.body.messageId, reaction: '👍🏽' }));
    expectOk(await send('reaction', { messageId: hello.body.messageId, reaction: '🇧🇷' }));

    for (const reaction of ['ok', '👍👍', 'a👍']) {
      expectError(
        await send('reaction', { messageId: hello.body.messageId, reaction }),
        400,
        "Invalid request body: reaction is one emoji (or 'remove', or empty, to remove it)",
      );
    }
    expectError(
      await send('reaction', { messageId: hello.body.messageId, reaction: '👍', number: CAROL }),
      400,
      'Invalid request body: messageId is a message of another chat',
    );
    // Not in the history: the chat comes from `number`, and a group needs the author.
    expectOk(await send('reaction', { number: CAROL, messageId: 'UNKNOWN1', reaction: '🎉' }));
    expectError(
      await send('reaction', { number: '120363000000000001@g.us', messageId: 'UNKNOWN2', reaction: '🎉' }),
      400,
      'Invalid request body: participant is required to react in a group to a message that is not ours',
    );
    expectError(await send('reaction', { messageId: 'UNKNOWN3', reaction: '🎉' }), 400, 'Number is required');
  });

  it('edit: our own recent text message; the history keeps the new text; the recipient sees an edit', async () => {
    const sent = await send('text', { number: BOB, text: 'see you at 7' });
    expectOk(sent);
    const id = sent.body.data.messageId;
    const res = await send('edit', { messageId: id, message: 'see you at 8' });
    expectOk(res);
    expect(await lastOut()).to.deep.include({ type: 'edit', edit: { messageId: id, text: 'see you at 8' } });
    expect(await exchanged(bobEvents, res.body.data.messageId)).to.deep.include({
      type: 'message_edit',
      isEdit: true,
      content: { text: 'see you at 8' },
      edit: { messageId: id, text: 'see you at 8' },
    });
    const history = await n.node.api.get(`/api/chat/history/alice?chat=${BOB}`, { token: alice });
    expect(history.body.messages.find((m: any) => m.id === id).text).to.equal('see you at 8');

    // A contact's edit replaces its text in our history too.
    const theirs = await inbound({ from: BOB, text: 'typo' });
    await exchanged(aliceEvents, theirs.body.messageId);
    const edit = await inbound({ from: BOB, edit: { messageId: theirs.body.messageId, text: 'fixed' } });
    expect(await exchanged(aliceEvents, edit.body.messageId)).to.deep.include({
      type: 'message_edit',
      isEdit: true,
      content: { text: 'fixed' },
    });
    const after = await n.node.api.get(`/api/chat/history/alice?chat=${BOB}`, { token: alice });
    expect(after.body.messages.find((m: any) => m.id === theirs.body.messageId).text).to.equal('fixed');

    expectError(
      await send('edit', { messageId: theirs.body.messageId, message: 'mine now' }),
      400,
      'Invalid request body: only messages sent by this instance can be edited',
    );
    expectError(await send('edit', { messageId: 'NOPE', message: 'x' }), 404, 'Message not found in the chat history');
    expectError(await send('edit', { messageId: id }), 400, 'Message is required');

    // Past the network's window of 15 minutes.
    const instance = await n.node.store.instances.findByTokenHash(hashToken(alice));
    await n.node.store.messages.save({
      instanceId: instance!.id,
      id: 'OLD-TEXT-1',
      chatJid: BOB_JID,
      fromMe: true,
      senderJid: ALICE_JID,
      timestamp: Date.now() - 16 * 60_000,
      type: 'text',
      text: 'old',
      media: undefined,
    });
    expectError(
      await send('edit', { messageId: 'OLD-TEXT-1', message: 'new' }),
      400,
      'Invalid request body: the message is older than 15 minutes, past the edit window of WhatsApp',
    );
  });

  it('forward: a text or a received file of the history, marked as forwarded', async () => {
    const text = await inbound({ from: BOB, text: 'pass it on' });
    await exchanged(aliceEvents, text.body.messageId);
    const res = await send('forward', { messageId: text.body.messageId, to: CAROL });
    expectOk(res);
    expect(await lastOut(CAROL)).to.deep.include({ type: 'text', text: 'pass it on', forwarded: true });
    const carolEvents = await n.record(carol);
    const again = await send('forward', { messageId: text.body.messageId, number: CAROL });
    expectOk(again);
    expect(await exchanged(carolEvents, again.body.data.messageId)).to.deep.include({
      type: 'text',
      content: { text: 'pass it on' },
      forwarded: true,
    });

    const png = await pngImage(20, 20);
    const file = await inbound({
      from: BOB,
      media: { kind: 'image', mimetype: 'image/png', caption: 'look', base64: png.toString('base64') },
    });
    await exchanged(aliceEvents, file.body.messageId);
    expectOk(await send('forward', { messageId: file.body.messageId, to: CAROL }));
    const out = await lastOut(CAROL);
    expect(out).to.deep.include({ type: 'media', text: 'look', forwarded: true });
    expect(out.media).to.deep.include({ kind: 'image', mimetype: 'image/png', size: png.length, caption: 'look' });

    const poll = await send('poll', { number: BOB, question: 'q', options: ['a', 'b'] });
    expectError(
      await send('forward', { messageId: poll.body.data.messageId, to: CAROL }),
      400,
      'Invalid request body: only text and media messages can be forwarded, not poll',
    );
    expectError(await send('forward', { messageId: 'NOPE', to: CAROL }), 404, 'Message not found in the chat history');
    expectError(await send('forward', { messageId: text.body.messageId }), 400, 'to is required');
  });

  it('linkPreview: the first link of a text gets its card (title, description, a small image), best effort', async () => {
    const page = `<html><head><title>ignored</title>
      <meta property="og:title" content="Shoes &amp; more">
      <meta content="Autumn collection" name="description">
      <meta property="og:image" content="/photo.png"></head><body>hi</body></html>`;
    server.serve('/shop.html', Buffer.from(page), 'text/html; charset=utf-8');
    server.serve('/plain.html', Buffer.from('<html><body>no head</body></html>'), 'text/html');
    const url = server.url('/shop.html');
    const res = await send('text', { number: BOB, text: `new in: ${url}.`, linkPreview: true });
    expectOk(res);
    expect(res.body.data.linkPreview).to.deep.equal({ url, title: 'Shoes & more' });
    const card = (await lastOut()).linkPreview;
    expect(card).to.deep.include({ url, title: 'Shoes & more', description: 'Autumn collection' });
    expect(card.thumbnailBytes).to.be.greaterThan(100);

    // No title, no link, or not asked: the text goes without a card.
    expectOk(await send('text', { number: BOB, text: `see ${server.url('/plain.html')}`, linkPreview: true }));
    expect((await lastOut()).linkPreview).to.equal(undefined);
    expectOk(await send('text', { number: BOB, text: 'no link here', linkPreview: true }));
    expect((await lastOut()).linkPreview).to.equal(undefined);
    expectOk(await send('text', { number: BOB, text: url }));
    expect((await lastOut()).linkPreview).to.equal(undefined);
    const wrong = await send('text', { number: BOB, text: url, linkPreview: 'yes' });
    expect(wrong.status).to.equal(400);
    expect(wrong.body.error.message).to.include('linkPreview');
  });

  it('source: a label echoed in the answer and in the outgoing message.exchange; absent, it stays "api"', async () => {
    const res = await send('poll', { number: BOB, question: 'q?', options: ['a', 'b'], source: 'crm-7' });
    expectOk(res);
    expect(res.body.data.source).to.equal('crm-7');
    expect((await exchanged(aliceEvents, res.body.data.messageId)).source).to.equal('crm-7');
    const text = await send('text', { number: BOB, text: 'labelled', source: 'campaign-12' });
    expect((await exchanged(aliceEvents, text.body.data.messageId)).source).to.equal('campaign-12');
    const plain = await send('text', { number: BOB, text: 'plain' });
    expect((await exchanged(aliceEvents, plain.body.data.messageId)).source).to.equal('api');
    // The label is stored with the message too.
    const history = await n.node.api.get(`/api/chat/history/alice?chat=${BOB}&limit=5`, { token: alice });
    const byId = new Map((history.body.messages as any[]).map((m) => [m.id, m.source]));
    expect(byId.get(text.body.data.messageId)).to.equal('campaign-12');
    expect(byId.get(plain.body.data.messageId)).to.equal(null);
  });

  it('delay: "typing…" first (or "recording…" before a voice note), in seconds up to 30 s (delayMs in ms)', async () => {
    const started = Date.now();
    expectOk(await send('poll', { number: BOB, question: 'q?', options: ['a', 'b'], delay: 0.3 }));
    expect(Date.now() - started).to.be.at.least(300);
    const [presence, poll] = (await n.outbox('alice', alice, BOB)).slice(-2);
    expect(presence).to.deep.include({ type: 'presence', presence: 'composing' });
    expect(poll.type).to.equal('poll');
    expect(poll.timestamp - presence.timestamp).to.be.at.least(300);

    expectOk(
      await n.node.api.post(
        '/api/message/media/alice',
        { number: BOB, mediaType: 'audio', mediaUrl: server.url('/tone.wav'), isVoice: true, delayMs: 50 },
        { token: alice },
      ),
    );
    const [recording] = (await n.outbox('alice', alice, BOB)).slice(-2);
    expect(recording).to.deep.include({ type: 'presence', presence: 'recording' });

    expectError(
      await send('poll', { number: BOB, question: 'q', options: ['a', 'b'], delay: 31 }),
      400,
      'Invalid request body: delay must be from 0 to 30 seconds',
    );
    expectError(
      await send('poll', { number: BOB, question: 'q', options: ['a', 'b'], delayMs: 30_001 }),
      400,
      'Invalid request body: delayMs must be from 0 to 30000',
    );
    expectError(
      await send('text', { number: BOB, text: 'x', delay: 10, delayMs: 10 }),
      400,
      "Invalid request body: send 'delay' or 'delayMs', not both",
    );
  });

  it('every kind follows the instance states and errors of the text send', async () => {
    const idle = await n.idle('kinds-idle');
    const bodies: Record<string, unknown> = {
      sticker: { number: BOB, imageUrl: server.url('/photo.png') },
      contact: { number: BOB, vcard: [{ fullName: 'A', phone: '5511900000001' }] },
      pix: { number: BOB, merchantName: 'Loja', pixKey: CPF, pixKeyType: 'CPF' },
      button: { number: BOB, contentText: 'x', buttons: [{ id: 'a', displayText: 'A' }] },
      list: {
        number: BOB,
        contentText: 'x',
        buttonText: 'y',
        sections: [{ title: 's', rows: [{ id: 'r', title: 'R' }] }],
      },
      carousel: { number: BOB, cards: [{ header: { title: 't' }, body: { text: 'b' } }] },
      poll: { number: BOB, question: 'q', options: ['a', 'b'] },
      event: { number: BOB, name: 'e', startAt: '2026-12-01T10:00:00Z' },
      reaction: { number: BOB, messageId: 'X1', reaction: '👍' },
    };
    const text = await send('text', { number: BOB, text: 'x' }, 'kinds-idle', idle);
    for (const [kind, body] of Object.entries(bodies)) {
      const res = await send(kind, body, 'kinds-idle', idle);
      expect([res.status, res.body.error?.message], kind).to.deep.equal([
        text.status,
        'Instance is not connected to WhatsApp',
      ]);
      const unnamed = await n.node.api.post(`/api/message/${kind}`, body, { token: alice });
      expectError(unnamed, 400, 'Instance name is required');
      expect((await send(kind, { ...(body as object), number: undefined })).body.error.message, kind).to.equal(
        'Number is required',
      );
    }
  });

  it('the sandbox inbound takes every kind, one at a time', async () => {
    const cases: [Record<string, unknown>, Record<string, unknown>][] = [
      [{ contacts: [{ fullName: 'Zé', phone: '+5511900000009' }] }, { type: 'contact', content: { text: 'Zé' } }],
      [
        { reaction: { messageId: 'M1', emoji: '❤️' } },
        { type: 'reaction', reaction: { messageId: 'M1', emoji: '❤️' } },
      ],
      [
        { poll: { question: 'Q?', options: ['a', 'b'] } },
        { type: 'poll', poll: { question: 'Q?', options: ['a', 'b'], maxAnswer: 1 } },
      ],
      [{ revoked: { messageId: 'M2' } }, { type: 'message_revoke', revoked: { messageId: 'M2' } }],
      [
        { text: 'fwd', forwarded: true },
        { type: 'text', forwarded: true },
      ],
      [
        { buttonReplyId: 'yes', text: 'Yes' },
        { type: 'buttons_response', interactive: { selectedButtonId: 'yes', selectedRowId: null } },
      ],
      [
        { event: { name: 'Meet', startAt: '2026-12-01T10:00:00Z' } },
        {
          type: 'event',
          event: {
            name: 'Meet',
            description: null,
            startAt: '2026-12-01T10:00:00.000Z',
            endAt: null,
            location: null,
            joinLink: null,
          },
        },
      ],
      [{ media: { kind: 'sticker', mimetype: 'image/webp' } }, { type: 'sticker' }],
    ];
    for (const [body, expected] of cases) {
      const res = await inbound({ from: BOB, ...body });
      expectOk(res);
      expect(await exchanged(aliceEvents, res.body.messageId), JSON.stringify(body)).to.deep.include(expected);
    }
    const two = await inbound({ from: BOB, text: 'x', reaction: { messageId: 'M1', emoji: '👍' } });
    expect(two.status).to.equal(400);
    expect(two.body.error.message).to.match(/^Invalid request body: send one of/);
  });
});
