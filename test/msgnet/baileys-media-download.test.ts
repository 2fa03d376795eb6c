import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { MediaDownloader } from '../../src/msgnet/baileys/media-download.js';
import type { NormalizedMessage } from '../../src/msgnet/msgnet-events.js';
import { connectedSession } from './baileys-harness.js';

const PEER = '5511988887777@s.whatsapp.net';

const image = (id: string): WAMessage => ({
  key: { remoteJid: PEER, id, fromMe: false },
  message: { imageMessage: { mimetype: 'image/jpeg', caption: 'look', fileLength: 4 } },
  messageTimestamp: 10,
});

describe('BaileysSession: downloading received media', () => {
  const downloads: string[] = [];
  const downloader: MediaDownloader = async (raw) => {
    downloads.push(raw.key.id!);
    return Readable.from([Buffer.from('ab'), Buffer.from('cd')]);
  };

  async function received(id: string) {
    const h = await connectedSession({ driver: { downloadMedia: downloader } });
    h.factory.last.emit('messages.upsert', { type: 'notify', messages: [image(id)] });
    const event = h.events.find((e) => e.type === 'message');
    return { h, message: (event as { message: NormalizedMessage }).message };
  }

  it('downloads the media of a message it received, from the raw message', async () => {
    const { h, message } = await received('IMG1');
    const media = await h.session.downloadMedia(message, 1024);
    expect(media.data.toString()).to.equal('abcd');
    expect(media.mimetype).to.equal('image/jpeg');
    expect(downloads).to.include('IMG1');
  });

  it('refuses media past the size limit, and a message it does not hold', async () => {
    const { h, message } = await received('IMG2');
    await h.session.downloadMedia(message, 3).then(
      () => expect.fail('expected a refusal'),
      (err: Error) => expect(err.name).to.equal('PayloadTooLargeError'),
    );
    await h.session.downloadMedia({ ...message, id: 'UNKNOWN' }, 1024).then(
      () => expect.fail('expected a refusal'),
      (err: Error) => expect(err.message).to.equal('Media not available'),
    );
  });
});
