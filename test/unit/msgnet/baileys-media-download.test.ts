import { Readable } from 'node:stream';
import { expect } from 'chai';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { MediaDownloader } from '../../../src/msgnet/baileys/media-download.js';
import type { ProxyAgents } from '../../../src/msgnet/baileys/proxy-agents.js';
import type { ProxySettings } from '../../../src/msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../../../src/msgnet/msgnet-events.js';
import { connectedSession } from '../../helpers/baileys/baileys-harness.js';

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
    const media = await h.session.messages.downloadMedia(message, 1024);
    expect(media.data.toString()).to.equal('abcd');
    expect(media.mimetype).to.equal('image/jpeg');
    expect(downloads).to.include('IMG1');
  });

  it('downloads a file once when several readers ask for it (media pipeline, then the helpdesk bridge)', async () => {
    const { h, message } = await received('IMG3');
    await h.session.messages.downloadMedia(message, 1024);
    const again = await h.session.messages.downloadMedia(message, 1024);
    expect(again.data.toString()).to.equal('abcd');
    expect(downloads.filter((id) => id === 'IMG3')).to.have.length(1);
    await h.session.messages.downloadMedia(message, 3).then(
      () => expect.fail('expected a refusal'),
      (err: Error) => expect(err.name).to.equal('PayloadTooLargeError'),
    );
  });

  it('refuses media past the size limit, and a message it does not hold', async () => {
    const { h, message } = await received('IMG2');
    await h.session.messages.downloadMedia(message, 3).then(
      () => expect.fail('expected a refusal'),
      (err: Error) => expect(err.name).to.equal('PayloadTooLargeError'),
    );
    await h.session.messages.downloadMedia({ ...message, id: 'UNKNOWN' }, 1024).then(
      () => expect.fail('expected a refusal'),
      (err: Error) => expect(err.message).to.equal('Media not available'),
    );
  });
});

describe('BaileysSession: media downloads go through the instance proxy', () => {
  const proxyA: ProxySettings = {
    protocol: 'http',
    host: 'proxy-a.example.com',
    port: 3128,
    user: undefined,
    password: undefined,
  };
  const proxyB: ProxySettings = {
    protocol: 'socks5',
    host: 'proxy-b.example.com',
    port: 1080,
    user: 'u',
    password: 'p',
  };

  function fakeAgents(p: ProxySettings, closed: string[]): ProxyAgents {
    const dispatcher = { name: `dispatcher-${p.host}` };
    return {
      agent: { name: `agent-${p.host}` },
      fetchAgent: { name: `agent-${p.host}` },
      dispatcher,
      fetchOptions: { dispatcher },
      close: async () => void closed.push(p.host),
    } as unknown as ProxyAgents;
  }

  async function proxied() {
    const seen: unknown[] = [];
    const closed: string[] = [];
    const downloader: MediaDownloader = async (_raw, _sock, _log, fetchOptions) => {
      seen.push((fetchOptions as { dispatcher?: { name: string } } | undefined)?.dispatcher?.name);
      return Readable.from([Buffer.from('img')]);
    };
    const h = await connectedSession({
      proxy: proxyA,
      driver: { downloadMedia: downloader, proxyAgents: (p) => fakeAgents(p, closed) },
    });
    h.factory.last.emit('messages.upsert', { type: 'notify', messages: [image('PX1')] });
    const message = (h.events.find((e) => e.type === 'message') as { message: NormalizedMessage }).message;
    return { h, seen, closed, message };
  }

  it('passes the proxy dispatcher of the current socket to the download', async () => {
    const { h, seen, message } = await proxied();
    expect((await h.session.messages.downloadMedia(message, 1024)).data.toString()).to.equal('img');
    expect(seen).to.deep.equal(['dispatcher-proxy-a.example.com']);
  });

  it('applies a changed proxy at the next connection: the socket and downloads keep the old one until then', async () => {
    const { h, seen, closed, message } = await proxied();
    h.setProxy(proxyB);
    await h.session.messages.downloadMedia(message, 1024);
    expect(h.factory.sockets).to.have.length(1);
    await h.session.reconnect();
    expect(h.factory.sockets).to.have.length(2);
    expect(h.factory.last.config.agent).to.deep.equal({ name: 'agent-proxy-b.example.com' });
    expect(h.factory.last.config.options).to.deep.equal({ dispatcher: { name: 'dispatcher-proxy-b.example.com' } });
    h.factory.last.open();
    h.factory.last.emit('messages.upsert', { type: 'notify', messages: [image('PX2')] });
    const later = (h.events.filter((e) => e.type === 'message').at(-1) as { message: NormalizedMessage }).message;
    expect(later.id).to.equal('PX2');
    await h.session.messages.downloadMedia(later, 1024);
    expect(seen).to.deep.equal(['dispatcher-proxy-a.example.com', 'dispatcher-proxy-b.example.com']);
    expect(closed).to.deep.equal(['proxy-a.example.com']);
  });

  it('without a proxy any more, the next connection is direct', async () => {
    const { h, closed } = await proxied();
    h.setProxy(undefined);
    await h.session.reconnect();
    expect(h.factory.last.config.agent).to.equal(undefined);
    expect(closed).to.deep.equal(['proxy-a.example.com']);
  });

  it('gives up a download that outlives its deadline, and ends its stream', async () => {
    let stream: Readable | undefined;
    const h = await connectedSession({
      driver: {
        downloadMedia: async () => {
          stream = new Readable({ read() {} });
          stream.push(Buffer.from('partial'));
          return stream;
        },
      },
    });
    h.factory.last.emit('messages.upsert', { type: 'notify', messages: [image('SLOW')] });
    const message = (h.events.find((e) => e.type === 'message') as { message: NormalizedMessage }).message;
    const failure = await h.session.messages.downloadMedia(message, 1024, AbortSignal.timeout(20)).then(
      () => undefined,
      (err: Error) => err,
    );
    expect(failure?.message).to.equal('Media download took too long');
    expect(stream!.destroyed).to.equal(true);
  });
});
