import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { configureMediaTools, resolveMediaTools } from '../../src/media/media-tools.js';
import { OPUS_MIME } from '../../src/media/audio.js';
import { pngImage, startFileServer, video, wavTone } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const NUMBER = '5511600000001';

/** A status error: the spec's status, message, and internal status string as `error.code`. */
function expectStatusError(
  res: { status: number; text: string; body: any },
  status: number,
  code: string,
  message?: string,
) {
  expect(res.status, res.text).to.equal(status);
  expect(res.body.error.code, res.text).to.equal(code);
  if (message !== undefined) expect(res.body.error.message, res.text).to.equal(message);
}

describe('network operations: statuses (sandbox, HTTP)', function () {
  this.timeout(60_000);
  let n: NetworkNode;
  let server: FileServer;
  let token: string;

  const post = (body: unknown, name = 'stories', t = token) =>
    n.node.api.post(`/api/message/status/${name}`, body, { token: t });
  const lastStatus = async () => (await n.outbox('stories', token, 'status@broadcast')).at(-1);

  before(async () => {
    [n, server] = await Promise.all([startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }), startFileServer()]);
    token = await n.linked('stories', NUMBER);
    server.serve('/photo.png', await pngImage(800, 600), 'image/png');
    server.serve('/clip.mp4', await video(2), 'video/mp4');
    server.serve('/long.mp4', await video(35), 'video/mp4');
    server.serve('/clip.webm', await video(1, 'webm'), 'video/webm');
    server.serve('/tone.wav', wavTone(2), 'audio/wav');
    server.serve('/page.html', Buffer.from('<html>a login page</html>'), 'text/html');
    server.serve('/old.bmp', Buffer.concat([Buffer.from('BM'), Buffer.alloc(80)]), 'image/bmp');
  });

  after(async () => {
    await Promise.all([n?.stop(), server?.close()]);
  });

  it('publishes a text status with colour and font: the documented response; the font name becomes the network’s number', async () => {
    const res = await post({
      type: 'text',
      message: 'Open today',
      backgroundColor: '1e90ff',
      font: 'serif',
      source: 'crm',
    });
    expectOk(res);
    expect(res.body).to.deep.include({ message: 'Status published successfully', status: 'sent' });
    const data = res.body.data;
    expect(data).to.deep.include({
      direction: 'outgoing',
      messageType: 'text',
      content: 'Open today',
      source: 'crm',
      chat: { jid: 'status@broadcast', isGroup: false },
      sender: { jid: `${NUMBER}@s.whatsapp.net`, instance: 'stories' },
    });
    expect(data.messageId).to.be.a('string').and.not.empty;
    expect(data.timestamp).to.match(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const sent = await lastStatus();
    expect(sent).to.deep.include({
      messageId: data.messageId,
      type: 'status',
      text: 'Open today',
      status: { type: 'text', backgroundColor: '#1E90FF', font: 1 },
    });
    expect((await post({ type: 'text', message: 'plain' })).body.data.source).to.equal('api');
  });

  it('publishes image (re-encoded JPEG), video (MP4, length) and audio (converted to Opus, voice note, duration, waveform)', async () => {
    expectOk(await post({ type: 'image', message: 'menu', mediaUrl: server.url('/photo.png') }));
    expect((await lastStatus()).media).to.deep.include({ kind: 'image', mimetype: 'image/jpeg' });
    expectOk(await post({ type: 'video', message: 'tour', mediaUrl: server.url('/clip.mp4') }));
    expect((await lastStatus()).media).to.deep.include({ kind: 'video', mimetype: 'video/mp4', seconds: 2 });
    const audio = await post({ type: 'audio', message: 'hello', mediaUrl: server.url('/tone.wav') });
    expectOk(audio);
    expect(audio.body.data.messageType).to.equal('audio');
    const media = (await lastStatus()).media;
    expect(media).to.deep.include({ kind: 'audio', mimetype: OPUS_MIME, ptt: true, seconds: 2 });
    expect(media.waveform).to.have.length(64);
    expect(new Set(media.waveform).size).to.be.above(1);
    expectOk(
      await post({
        type: 'audio',
        message: 'song',
        mediaUrl: server.url('/tone.wav'),
        isVoice: false,
        duration: 7,
        waveform: [1, 2, 3],
      }),
    );
    expect((await lastStatus()).media).to.deep.include({ ptt: false, seconds: 7, waveform: [1, 2, 3] });
  });

  it('answers the 400s of the status table with their messages', async () => {
    expectError(
      await n.node.api.post('/api/message/status/', { type: 'text', message: 'x' }, { token: n.account }),
      400,
      'Instance name is required',
    );
    expectError(
      await n.node.api.post('/api/message/status/stories', undefined, { token, raw: '{"type":' }),
      400,
      'Invalid request body: malformed JSON',
    );
    expectError(await post({ message: 'x' }), 400, 'Type must be one of: text, image, video, audio');
    expectError(await post({ type: 'sticker', message: 'x' }), 400, 'Type must be one of: text, image, video, audio');
    expectError(await post({ type: 'text' }), 400, 'Message is required');
    expectError(await post({ type: 'text', message: '' }), 400, 'Message is required');
    for (const type of ['image', 'video', 'audio']) {
      expectError(await post({ type, message: 'x' }), 400, `MediaURL is required for type: ${type}`);
    }
    expectError(
      await post({ type: 'text', message: 'x', backgroundColor: 'blue' }),
      400,
      'Invalid request body: backgroundColor must be a hex colour such as #1E90FF',
    );
    expect((await post({ type: 'text', message: 'x', font: 'comic' })).body.error.message).to.match(
      /^Invalid request body: font must be one of: system, sans-serif, serif/,
    );
    expectError(
      await n.node.api.post('/api/message/status/ghost', { type: 'text', message: 'x' }, { token: n.account }),
      404,
      'Instance not found',
    );
  });

  it('download, validation and type failures carry their internal status as the code', async () => {
    const before = (await n.outbox('stories', token, 'status@broadcast')).length;
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/missing.png') }),
      400,
      'media_download_failed',
      'Failed to download media from URL',
    );
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: 'ftp://example.com/a.png' }),
      400,
      'media_download_failed',
      'Failed to download media from URL',
    );
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/page.html') }),
      400,
      'media_validation_failed',
      'The media is not an image',
    );
    expectStatusError(
      await post({ type: 'audio', message: 'x', mediaUrl: server.url('/photo.png') }),
      400,
      'media_validation_failed',
    );
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/photo.png'), mimeType: 'video/mp4' }),
      400,
      'media_validation_failed',
      'mimeType video/mp4 does not match type image',
    );
    const long = await post({ type: 'video', message: 'x', mediaUrl: server.url('/long.mp4') });
    expectStatusError(long, 400, 'media_validation_failed', 'The video lasts 35.0 s; at most 30 s are allowed');
    expectStatusError(
      await post({ type: 'video', message: 'x', mediaUrl: server.url('/clip.webm') }),
      400,
      'unsupported_media_type',
      'video/webm is not supported; send MP4 (H.264)',
    );
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/old.bmp') }),
      400,
      'unsupported_media_type',
    );
    expect(await n.outbox('stories', token, 'status@broadcast')).to.have.length(before);
  });

  it('refuses internal URLs on a node configured as in production (no ALLOW_PRIVATE_URLS)', async () => {
    const strict = await startNetworkNode();
    try {
      const t = await strict.linked('stories', '5511600000009');
      for (const url of [
        server.url('/photo.png'),
        'http://10.1.1.1/a.png',
        'http://169.254.169.254/latest/meta-data/',
        `http://[::1]:${server.port}/photo.png`,
      ]) {
        const res = await strict.node.api.post(
          '/api/message/status/stories',
          { type: 'image', message: 'x', mediaUrl: url },
          { token: t },
        );
        expectStatusError(res, 400, 'media_download_failed', 'Failed to download media from URL');
      }
      expect(await strict.outbox('stories', t, 'status@broadcast')).to.deep.equal([]);
    } finally {
      await strict.stop();
    }
  });

  it('answers the 500s (upload, conversion, send) and the 503 when disconnected', async () => {
    await n.fault('stories', token, 'uploadMedia', 'media host unreachable');
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/photo.png') }),
      500,
      'media_upload_failed',
      'Failed to upload media to WhatsApp',
    );
    await n.fault('stories', token, 'publishStatus', 'stanza rejected (479)');
    expectStatusError(
      await post({ type: 'text', message: 'x' }),
      500,
      'send_failed',
      'Failed to send status: stanza rejected (479)',
    );
    const idle = await n.idle('stories-idle');
    expectStatusError(
      await post({ type: 'text', message: 'x' }, 'stories-idle', idle),
      503,
      'disconnected',
      'Instance is not connected to WhatsApp',
    );
    expectStatusError(
      await post({ type: 'image', message: 'x', mediaUrl: server.url('/photo.png') }, 'stories-idle', idle),
      503,
      'disconnected',
    );
  });

  it('a conversion that ffmpeg cannot do is audio_conversion_failed (500)', async () => {
    // ffprobe stays available (the audio is recognised); the ffmpeg configured, which converts, does not exist.
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-path-'));
    const { ffprobe } = await resolveMediaTools();
    await configureMediaTools({ ffmpegPath: join(dir, 'ffmpeg'), ffprobePath: ffprobe.command });
    try {
      const res = await post({ type: 'audio', message: 'x', mediaUrl: server.url('/tone.wav') });
      expectStatusError(res, 500, 'audio_conversion_failed', 'Failed to convert audio: ffmpeg is not installed');
    } finally {
      await configureMediaTools({});
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
