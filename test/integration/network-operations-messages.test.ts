import { expect } from 'chai';
import { OPUS_MIME } from '../../src/media/audio.js';
import { pngImage, startFileServer, wavTone } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const ALICE = '5511800000001';
const BOB = '5511800000002';
const BOB_JID = `${BOB}@s.whatsapp.net`;

describe('network operations: messages, deletion and history (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let server: FileServer;
  let alice: string;
  let bob: string;

  const send = (path: string, body: unknown, name = 'alice', token = alice) =>
    n.node.api.post(`/api/message/${path}/${name}`, body, { token });
  const history = async (query: string, name = 'alice', token = alice) => {
    const res = await n.node.api.get(`/api/chat/history/${name}${query}`, { token });
    expectOk(res);
    return res.body;
  };

  before(async () => {
    [n, server] = await Promise.all([startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }), startFileServer()]);
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    server.serve('/photo.png', await pngImage(300, 200), 'image/png');
    server.serve('/tone.wav', wavTone(1), 'audio/wav');
  });

  after(async () => {
    await Promise.all([n?.stop(), server?.close()]);
  });

  describe('text', () => {
    it('delayMs shows "typing…" to the chat first, then sends after the delay', async () => {
      const started = Date.now();
      const res = await send('text', { number: BOB, text: 'one moment', delayMs: 400 });
      expectOk(res);
      expect(Date.now() - started).to.be.at.least(400);
      const [presence, text] = (await n.outbox('alice', alice, BOB)).slice(-2);
      expect(presence).to.deep.include({ type: 'presence', presence: 'composing' });
      expect(text).to.deep.include({ type: 'text', text: 'one moment', messageId: res.body.data.messageId });
      expect(text.timestamp - presence.timestamp).to.be.at.least(400);
    });

    it('mentions: the sender records them, the recipient receives them in message.exchange', async () => {
      const events = await n.record(bob);
      const res = await send('text', { number: BOB, message: `hi @${BOB}`, mention: [`+${BOB}`] });
      expectOk(res);
      const sent = (await n.outbox('alice', alice, BOB)).at(-1);
      expect(sent).to.deep.include({ type: 'text', text: `hi @${BOB}`, mentions: [BOB_JID] });
      const received = () =>
        events.find((e) => e.event === 'message.exchange' && (e.data as any).id === res.body.data.messageId);
      for (let i = 0; i < 100 && !received(); i++) await new Promise((r) => setTimeout(r, 20));
      expect((received()!.data as any).message.mentions).to.deep.equal([BOB_JID]);
    });

    it('mentionAll mentions every member of a group; it is refused outside groups', async () => {
      const created = await n.node.api.post(
        '/api/sandbox/group/alice',
        { subject: 'Crew', participants: [{ number: '5511800000051' }, { number: '5511800000052' }] },
        { token: alice },
      );
      expect(created.status, created.text).to.equal(201);
      const groupJid = created.body.group.jid as string;
      expectOk(await send('text', { number: groupJid, text: 'all hands', mentionAll: true }));
      const sent = (await n.outbox('alice', alice, groupJid)).at(-1);
      expect(sent.mentions).to.include.members(['5511800000051@s.whatsapp.net', '5511800000052@s.whatsapp.net']);
      expectError(
        await send('text', { number: BOB, text: 'x', mentionAll: true }),
        400,
        'Invalid request body: mentionAll is for groups only',
      );
      expectError(
        await send('text', { number: BOB, text: 'x', mention: [groupJid] }),
        400,
        'Invalid request body: mention takes people, not groups',
      );
      expectError(
        await send('text', { number: BOB, text: 'x', mention: ['not a number'] }),
        400,
        'Invalid mention: expected digits with the country code (an optional +) or a JID',
      );
    });

    it('location: sent as a place, received in message.exchange with its coordinates', async () => {
      const events = await n.record(bob);
      const res = await send('location', {
        number: BOB,
        latitude: -23.5505,
        longitude: -46.6333,
        name: 'Praça da Sé',
        address: 'São Paulo',
      });
      expectOk(res);
      // The hosted product's text rendering of a place.
      expect(res.body.data).to.deep.include({
        messageType: 'location',
        content: '📍 Praça da Sé\nSão Paulo\nLat: -23.5505, Long: -46.6333',
      });
      const place = { latitude: -23.5505, longitude: -46.6333, name: 'Praça da Sé', address: 'São Paulo' };
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ type: 'location', location: place });
      const received = () =>
        events.find((e) => e.event === 'message.exchange' && (e.data as any).id === res.body.data.messageId);
      for (let i = 0; i < 100 && !received(); i++) await new Promise((r) => setTimeout(r, 20));
      expect((received()!.data as any).message).to.deep.include({
        type: 'location',
        content: { text: 'Praça da Sé' },
        location: place,
      });
      const recorded = (await history(`?chat=${BOB}`)).messages.find((m: any) => m.id === res.body.data.messageId);
      expect(recorded).to.deep.include({ type: 'location', text: 'Praça da Sé' });

      // What a contact shares reaches the instance the same way (the sandbox's inbound).
      const aliceEvents = await n.record(alice);
      const inbound = await n.node.api.post(
        '/api/sandbox/inbound/alice',
        { from: BOB, location: { latitude: 1.5, longitude: 2.5 }, mention: [ALICE] },
        { token: alice },
      );
      expectOk(inbound);
      const shared = aliceEvents.find(
        (e) => e.event === 'message.exchange' && (e.data as any).id === inbound.body.messageId,
      );
      expect((shared!.data as any).message).to.deep.include({
        type: 'location',
        location: { latitude: 1.5, longitude: 2.5, name: null, address: null },
        mentions: [`${ALICE}@s.whatsapp.net`],
      });
    });

    it('location: refuses (0, 0), out-of-range and missing coordinates', async () => {
      expectError(
        await send('location', { number: BOB, latitude: 0, longitude: 0 }),
        400,
        'Invalid request body: latitude 0 and longitude 0 is not a place',
      );
      expectError(
        await send('location', { number: BOB, latitude: 91, longitude: 0 }),
        400,
        "Invalid request body: field 'latitude': Too big: expected number to be <=90",
      );
      expectError(
        await send('location', { number: BOB, latitude: 10 }),
        400,
        'Invalid request body: latitude and longitude are required',
      );
      expectError(await send('location', { latitude: 1, longitude: 1 }), 400, 'Number is required');
    });

    it('replyTo quotes a message of the history', async () => {
      const question = await send('text', { number: ALICE, text: 'are you open?' }, 'bob', bob);
      expectOk(question);
      const id = question.body.data.messageId as string;
      // Alice's phone receives it asynchronously (over the transport): wait until her history has it.
      for (let i = 0; i < 100 && !(await history(`?chat=${BOB}`)).messages.some((m: any) => m.id === id); i++) {
        await new Promise((r) => setTimeout(r, 20));
      }
      const res = await send('text', { number: BOB, text: 'yes', replyTo: id });
      expectOk(res);
      expect(res.body.data.replyTo).to.equal(id);
      expect((await n.outbox('alice', alice, BOB)).at(-1)).to.deep.include({ text: 'yes', replyTo: id });
    });

    it('refuses a delay out of range, an unknown replyTo, a missing number or text', async () => {
      for (const delayMs of [-1, 30_001]) {
        expectError(
          await send('text', { number: BOB, text: 'x', delayMs }),
          400,
          'Invalid request body: delayMs must be from 0 to 30000',
        );
      }
      expectError(
        await send('text', { number: BOB, text: 'x', replyTo: 'NOPE' }),
        400,
        'Invalid request body: replyTo names no message in the chat history',
      );
      expectError(await send('text', { text: 'x' }), 400, 'Number is required');
      expectError(await send('text', { number: BOB }), 400, 'Message is required');
      expectError(
        await n.node.api.post('/api/message/text/', { number: BOB, text: 'x' }, { token: n.account }),
        400,
        'Instance name is required',
      );
    });
  });

  describe('media', () => {
    it('sends an image by URL (JPEG), a document as base64 with its name, and a voice note converted to Opus', async () => {
      const image = await send('media', {
        number: BOB,
        type: 'image',
        mediaUrl: server.url('/photo.png'),
        caption: 'our menu',
      });
      expectOk(image);
      expect(image.body.data).to.deep.include({ messageType: 'image', content: 'our menu', to: BOB_JID });
      expect((await n.outbox('alice', alice, BOB)).at(-1).media).to.deep.include({
        kind: 'image',
        mimetype: 'image/jpeg',
        caption: 'our menu',
      });

      const pdf = Buffer.from('%PDF-1.4\n% a tiny document\n');
      const doc = await send('media', {
        number: BOB,
        type: 'document',
        base64: `data:application/pdf;base64,${pdf.toString('base64')}`,
        fileName: 'terms.pdf',
      });
      expectOk(doc);
      expect((await n.outbox('alice', alice, BOB)).at(-1).media).to.deep.include({
        kind: 'document',
        mimetype: 'application/pdf',
        fileName: 'terms.pdf',
        size: pdf.length,
      });

      const voice = await send('media', { number: BOB, type: 'audio', mediaUrl: server.url('/tone.wav'), ptt: true });
      expectOk(voice);
      const media = (await n.outbox('alice', alice, BOB)).at(-1).media;
      expect(media).to.deep.include({ kind: 'audio', mimetype: OPUS_MIME, ptt: true, seconds: 1 });
      expect(media.waveform).to.have.length(64);
    });

    it("takes the hosted product's field names: mediaType, mediaBase64, message, mimetype, isVoice, duration, waveform", async () => {
      const png = await pngImage(40, 30);
      const image = await send('media', {
        number: BOB,
        mediaType: 'image',
        mediaBase64: `data:image/png;base64,${png.toString('base64')}`,
        message: 'from a hosted-product client',
        mimetype: 'image/png',
      });
      expectOk(image);
      expect(image.headers.get('x-ignored-fields')).to.equal(null);
      expect((await n.outbox('alice', alice, BOB)).at(-1).media).to.deep.include({
        kind: 'image',
        caption: 'from a hosted-product client',
      });

      const waveform = Array.from({ length: 64 }, (_, i) => i % 100);
      const voice = await send('media', {
        number: BOB,
        mediaType: 'audio',
        mediaUrl: server.url('/tone.wav'),
        isVoice: true,
        duration: 7,
        waveform,
      });
      expectOk(voice);
      expect(voice.body.data.media.seconds).to.equal(7);
      const media = (await n.outbox('alice', alice, BOB)).at(-1).media;
      expect(media).to.deep.include({ kind: 'audio', mimetype: OPUS_MIME, ptt: true, seconds: 7 });
      expect(media.waveform).to.deep.equal(waveform);

      expectError(
        await send('media', { number: BOB, type: 'image', mediaType: 'video', mediaUrl: server.url('/photo.png') }),
        400,
        "Invalid request body: send 'type' or 'mediaType', not both",
      );
      expectError(
        await send('media', { number: BOB, type: 'image', mediaUrl: server.url('/photo.png'), duration: 3 }),
        400,
        "Invalid request body: 'duration' and 'waveform' are for audio only",
      );
    });

    it('refuses bad bodies, bad media and a disconnected instance', async () => {
      expectError(
        await send('media', { type: 'image', mediaUrl: server.url('/photo.png') }),
        400,
        'Number is required',
      );
      expectError(
        await send('media', { number: BOB, type: 'gif', mediaUrl: server.url('/photo.png') }),
        400,
        'Type must be one of: image, video, audio, document',
      );
      expectError(await send('media', { number: BOB, type: 'image' }), 400, 'mediaUrl or base64 is required');
      expectError(
        await send('media', { number: BOB, type: 'image', mediaUrl: server.url('/photo.png'), base64: 'AAAA' }),
        400,
        "Invalid request body: send 'mediaUrl' or 'base64', not both",
      );
      expectError(
        await send('media', { number: BOB, type: 'image', base64: '###' }),
        400,
        'Invalid request body: base64 is not valid base64',
      );
      const notImage = await send('media', {
        number: BOB,
        type: 'image',
        base64: Buffer.from('plain text').toString('base64'),
      });
      expectError(notImage, 400, 'The media is not an image');
      expect(notImage.body.error.code).to.equal('media_validation_failed');
      expectError(
        await send('media', { number: BOB, type: 'image', mediaUrl: server.url('/gone.png') }),
        400,
        'Failed to download media from URL: HTTP 404',
      );
      const idle = await n.idle('media-idle');
      expectError(
        await send('media', { number: BOB, type: 'image', mediaUrl: server.url('/photo.png') }, 'media-idle', idle),
        400,
        'Instance is not connected to WhatsApp',
      );
    });

    it('refuses URLs into internal networks on a production-like node', async () => {
      const strict = await startNetworkNode();
      try {
        const t = await strict.linked('alice', ALICE.replace(/1$/, '9'));
        for (const url of [
          server.url('/photo.png'),
          'http://10.0.0.1/a.png',
          'http://169.254.169.254/latest/meta-data/',
          'http://[::1]/a.png',
        ]) {
          const res = await strict.node.api.post(
            '/api/message/media/alice',
            { number: BOB, type: 'image', mediaUrl: url },
            { token: t },
          );
          expectError(res, 400, 'URL refused: URLs pointing to internal networks are not allowed');
        }
        expect(await strict.outbox('alice', t)).to.deep.equal([]);
      } finally {
        await strict.stop();
      }
    });
  });

  describe('delete', () => {
    it('revokes a message found in the history, and a status by its id alone', async () => {
      const sent = await send('text', { number: BOB, text: 'oops' });
      const id = sent.body.data.messageId as string;
      const res = await send('delete', { messageId: id });
      expectOk(res);
      expect(res.body).to.deep.include({ messageId: id, chat: BOB_JID });
      expect((await n.outbox('alice', alice, BOB_JID)).at(-1)).to.deep.include({
        type: 'delete',
        deletedMessageId: id,
      });
      expect((await history(`?chat=${BOB}`)).messages.map((m: any) => m.id)).to.not.include(id);

      const status = await n.node.api.post(
        '/api/message/status/alice',
        { type: 'text', message: 'flash sale' },
        { token: alice },
      );
      const statusId = status.body.data.messageId as string;
      const revoked = await send('delete', { messageId: statusId });
      expectOk(revoked);
      expect(revoked.body.chat).to.equal('status@broadcast');
      expect((await n.outbox('alice', alice, 'status@broadcast')).at(-1)).to.deep.include({
        type: 'delete',
        deletedMessageId: statusId,
      });
    });

    it('needs the chat for a message it does not know; refuses a missing id', async () => {
      expectError(
        await send('delete', { messageId: 'UNKNOWN1' }),
        404,
        'Message not found in the chat history; give its chat',
      );
      expectOk(await send('delete', { messageId: 'UNKNOWN1', chat: BOB }));
      expectError(await send('delete', {}), 400, 'messageId is required');
    });
  });

  describe('history', () => {
    it('lists both directions newest first, by chat, with cursor paging', async () => {
      const all = await history(`?chat=${BOB}`);
      expect(all.messages.length).to.be.at.least(5);
      const times = all.messages.map((m: any) => Date.parse(m.timestamp));
      expect([...times].sort((a, b) => b - a)).to.deep.equal(times);
      expect(new Set(all.messages.map((m: any) => m.direction))).to.deep.equal(new Set(['incoming', 'outgoing']));
      const incoming = all.messages.find((m: any) => m.direction === 'incoming');
      expect(incoming).to.deep.include({
        chat: { jid: BOB_JID, isGroup: false },
        sender: BOB_JID,
        type: 'text',
        text: 'are you open?',
        media: null,
      });
      expect(all.messages.find((m: any) => m.type === 'document').media).to.deep.include({
        kind: 'document',
        mimetype: 'application/pdf',
        fileName: 'terms.pdf',
      });

      const page1 = await history(`?chat=${BOB}&limit=2`);
      expect(page1.meta).to.deep.include({ count: 2, hasMore: true });
      const page2 = await history(`?chat=${BOB}&limit=2&before=${page1.meta.nextBefore}`);
      expect(page2.messages.map((m: any) => m.id)).to.deep.equal(all.messages.slice(2, 4).map((m: any) => m.id));
      const older = await history(
        `?chat=${BOB}&before=${encodeURIComponent(new Date(Date.parse(all.messages[0].timestamp)).toISOString())}`,
      );
      expect(older.messages.map((m: any) => m.id)).to.not.include(all.messages[0].id);
      expect(
        (await history('?chat=status@broadcast')).messages.every((m: any) => m.chat.jid === 'status@broadcast'),
      ).to.equal(true);
    });

    it('refuses bad parameters and answers the guard errors', async () => {
      for (const limit of ['0', '501', 'ten']) {
        expectError(
          await n.node.api.get(`/api/chat/history/alice?limit=${limit}`, { token: alice }),
          400,
          'limit must be an integer from 1 to 500',
        );
      }
      expectError(
        await n.node.api.get('/api/chat/history/alice?before=yesterday', { token: alice }),
        400,
        'before must be a message id from the history, Unix milliseconds, or an RFC 3339 time',
      );
      expectError(await n.node.api.get('/api/chat/history/', { token: n.account }), 400, 'Instance name is required');
      expectError(await n.node.api.get('/api/chat/history/ghost', { token: n.account }), 404, 'Instance not found');
      expectError(
        await n.node.api.get('/api/chat/history/alice', { token: bob }),
        403,
        'Instance token does not match requested instance',
      );
    });
  });
});
