import { expect } from 'chai';
import { WebSocket } from 'ws';
import { hashToken } from '../../src/security/tokens.js';
import { pngImage } from '../helpers/media-fixtures.js';
import { freePort } from '../helpers/redis-server.js';
import { LocalS3, S3_ACCESS_KEY, S3_SECRET_KEY } from '../helpers/s3-server.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectError, expectOk } from './support.js';
import { until } from '../helpers/until.js';

const CONTACT = '5511955554444';
let seq = 0;
const fresh = (prefix: string) => `${prefix}-${++seq}`;

describe('received media: object storage, base64 in events, storage and proxy endpoints, catch-up', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let s3: LocalS3;
  let withBase64: WebhookReceiver;
  let plain: WebhookReceiver;
  let image: Buffer;

  before(async () => {
    [n, s3, withBase64, plain, image] = await Promise.all([
      startNetworkNode({ ALLOW_PRIVATE_URLS: 'true', WEBHOOK_MAX_ATTEMPTS: '1' }),
      LocalS3.start(['media']),
      WebhookReceiver.start(),
      WebhookReceiver.start(),
      pngImage(8, 8),
    ]);
  });

  after(async () => {
    await Promise.all([n.stop(), s3.stop(), withBase64.stop(), plain.stop()]);
  });

  const api = () => n.node.api;
  const storageBody = (extra: Record<string, unknown> = {}) => ({
    s3Enabled: true,
    s3Bucket: 'media',
    s3AccessKey: S3_ACCESS_KEY,
    s3SecretKey: S3_SECRET_KEY,
    s3Endpoint: s3.endpoint,
    s3PathPrefix: 'inbound/',
    ...extra,
  });

  /** Creates an instance with `body`'s blocks and links it. */
  async function linked(name: string, body: Record<string, unknown> = {}) {
    const token = await n.node.createInstance(n.account, { name, ...body });
    expectOk(await api().get(`/api/instance/connect/${name}`, { token }));
    expectOk(await api().post(`/api/sandbox/link/${name}`, {}, { token }));
    const instance = await n.node.store.instances.findByTokenHash(hashToken(token));
    return { token, id: instance!.id };
  }

  async function sendImage(name: string, token: string, media: Record<string, unknown> = {}) {
    const res = await api().post(
      `/api/sandbox/inbound/${name}`,
      {
        from: CONTACT,
        media: {
          kind: 'image',
          mimetype: 'image/png',
          fileName: 'photo.png',
          caption: 'look',
          base64: image.toString('base64'),
          ...media,
        },
      },
      { token },
    );
    expectOk(res);
    return res.body.messageId as string;
  }

  const exchange = (r: WebhookReceiver, id: string) => r.events('message.exchange').find((e) => e.body.data.id === id);

  async function openSocket(name: string, token: string) {
    const frames: any[] = [];
    const ws = new WebSocket(`${n.node.url.replace(/^http/, 'ws')}/ws/${name}?token=${encodeURIComponent(token)}`);
    ws.on('message', (data: Buffer) => frames.push(JSON.parse(data.toString())));
    await new Promise<void>((resolve, reject) => {
      ws.once('open', () => resolve());
      ws.once('error', reject);
    });
    return { frames, close: () => ws.close() };
  }

  it('stores an inbound image under the prefix; base64 webhooks and WebSockets get the bytes, the other webhook the URL', async () => {
    const name = fresh('stored');
    const { token, id } = await linked(name, {
      ...storageBody(),
      webhookEnabled: true,
      webhookURL: withBase64.url,
      webhookBase64: true,
      webhookEvents: ['message.exchange'],
      websocketEnabled: true,
      websocketBase64: true,
    });
    expectOk(
      await api().post(
        `/api/events/webhook/${name}`,
        { label: 'plain', url: plain.url, events: ['message.exchange'] },
        { token },
      ),
      201,
    );
    const socket = await openSocket(name, token);
    const before = n.node.mediaCounters.snapshot();

    const messageId = await sendImage(name, token);

    const keys = await s3.keys('media', `inbound/${id}/`);
    expect(keys).to.have.length(1);
    const day = new Date().toISOString().slice(0, 10).replace(/-/g, '/');
    expect(keys[0]).to.equal(`inbound/${id}/${day}/${messageId}.png`);
    const object = await s3.object('media', keys[0]!);
    expect(object.body.equals(image)).to.equal(true);
    expect(object.contentType).to.equal('image/png');

    await until(() => !!exchange(withBase64, messageId) && !!exchange(plain, messageId), 'both webhooks', 10_000);
    const full = exchange(withBase64, messageId)!.body.data.message.media;
    expect(full).to.include({
      type: 'image',
      mimetype: 'image/png',
      fileName: 'photo.png',
      caption: 'look',
      size: image.length,
      error: null,
    });
    expect(full.base64).to.equal(image.toString('base64'));
    expect(full.s3Url).to.be.a('string').and.include(`/media/inbound/${id}/`);
    const slim = exchange(plain, messageId)!.body.data.message.media;
    expect(slim.base64).to.equal(null);
    expect(slim.url).to.equal(slim.s3Url);
    expect(exchange(plain, messageId)!.raw).to.not.include(image.toString('base64'));
    const fetched = await fetch(slim.s3Url);
    expect(fetched.status).to.equal(200);
    expect(Buffer.from(await fetched.arrayBuffer()).equals(image)).to.equal(true);

    await until(() => socket.frames.some((f) => f.data?.id === messageId), 'the WebSocket frame', 10_000);
    expect(socket.frames.find((f) => f.data?.id === messageId).data.message.media.base64).to.equal(
      image.toString('base64'),
    );
    socket.close();

    const after = n.node.mediaCounters.snapshot();
    expect(after.downloaded - before.downloaded).to.equal(1);
    expect(after.uploaded - before.uploaded).to.equal(1);
    expect(after.blobKept - before.blobKept).to.equal(1);
    const summary = await api().get(`/api/instance/getS3/${name}`, { token });
    expect(summary.body.s3).to.include({ status: 'ok', secretKey: null });
  });

  it('never puts the bytes in the durable queue: base64 deliveries reference one kept copy', async () => {
    const name = fresh('queue');
    const { token, id } = await linked(name, {
      webhookEnabled: true,
      webhookURL: withBase64.url,
      webhookBase64: true,
      webhookEvents: ['message.exchange'],
    });
    expectOk(
      await api().post(
        `/api/events/webhook/${name}`,
        { label: 'second', url: withBase64.url, base64: true, events: ['message.exchange'] },
        { token },
      ),
      201,
    );
    // Refused deliveries go to the dead letters (one attempt on this node), where their stored form stays.
    const respond = withBase64.respond;
    withBase64.respond = (r, i) => (r.body?.instanceData?.instance === name ? { status: 400 } : respond(r, i));
    try {
      const messageId = await sendImage(name, token);
      await until(
        () =>
          withBase64.events('message.exchange').filter((e) => e.body.data.id === messageId && e.status === 400)
            .length === 2,
        'two refusals',
        10000,
      );
      let dead = await n.node.store.deliveries.listDead(id);
      for (let i = 0; dead.length < 2 && i < 500; i++) {
        await new Promise((r) => setTimeout(r, 10));
        dead = await n.node.store.deliveries.listDead(id);
      }
      expect(dead).to.have.length(2);
      for (const row of dead) {
        expect(row.payload).to.not.include(image.toString('base64'));
        expect(JSON.parse(row.payload).mediaBlob).to.equal(messageId);
      }
      const posted = withBase64.events('message.exchange').filter((e) => e.body.data.id === messageId);
      expect(posted).to.have.length(2);
      for (const e of posted) expect(e.body.data.message.media.base64).to.equal(image.toString('base64'));
    } finally {
      withBase64.respond = respond;
    }
  });

  it('still delivers the event when the bucket refuses, with the cause in media.error and the storage status', async () => {
    const name = fresh('refused');
    const { token } = await linked(name, {
      ...storageBody({ s3Bucket: 'no-such-bucket' }),
      webhookEnabled: true,
      webhookURL: plain.url,
      webhookEvents: ['message.exchange'],
    });
    const before = n.node.mediaCounters.snapshot();
    const messageId = await sendImage(name, token);
    await until(() => !!exchange(plain, messageId), 'the event', 10_000);
    const media = exchange(plain, messageId)!.body.data.message.media;
    expect(media).to.include({ url: null, s3Url: null, base64: null, type: 'image' });
    expect(media.error).to.equal('storage failed: bucket "no-such-bucket" does not exist (NoSuchBucket)');
    expect(n.node.mediaCounters.snapshot().uploadFailed - before.uploadFailed).to.equal(1);
    const summary = await api().get(`/api/instance/getS3/${name}`, { token });
    expect(summary.body.s3).to.include({
      status: 'error',
      error: 'bucket "no-such-bucket" does not exist (NoSuchBucket)',
    });
  });

  it('still delivers the event when the store cannot be reached', async () => {
    const closed = await freePort();
    const name = fresh('unreachable');
    const { token } = await linked(name, {
      ...storageBody({ s3Endpoint: `http://127.0.0.1:${closed}` }),
      webhookEnabled: true,
      webhookURL: plain.url,
      webhookEvents: ['message.exchange'],
    });
    const messageId = await sendImage(name, token);
    await until(() => !!exchange(plain, messageId), 'the event', 10_000);
    expect(exchange(plain, messageId)!.body.data.message.media.error).to.equal(
      `storage failed: cannot reach 127.0.0.1:${closed}: connection refused`,
    );
  });

  it('notes a failed download in the event and emits it all the same', async () => {
    const name = fresh('nodownload');
    const { token } = await linked(name, {
      ...storageBody(),
      webhookEnabled: true,
      webhookURL: plain.url,
      webhookEvents: ['message.exchange'],
    });
    await n.fault(name, token, 'downloadMedia', 'media server unreachable');
    const before = n.node.mediaCounters.snapshot();
    const messageId = await sendImage(name, token);
    await until(() => !!exchange(plain, messageId), 'the event', 10_000);
    expect(exchange(plain, messageId)!.body.data.message.media).to.include({
      s3Url: null,
      error: 'download failed: media server unreachable',
    });
    expect(n.node.mediaCounters.snapshot().downloadFailed - before.downloadFailed).to.equal(1);
  });

  it('with neither storage nor base64, the event carries the metadata only and nothing is downloaded', async () => {
    const name = fresh('meta');
    const { token } = await linked(name, {
      webhookEnabled: true,
      webhookURL: plain.url,
      webhookEvents: ['message.exchange'],
    });
    const before = n.node.mediaCounters.snapshot();
    const messageId = await sendImage(name, token);
    await until(() => !!exchange(plain, messageId), 'the event', 10_000);
    expect(exchange(plain, messageId)!.body.data.message.media).to.deep.equal({
      type: 'image',
      kind: 'image',
      url: null,
      s3Url: null,
      base64: null,
      mimetype: 'image/png',
      fileName: 'photo.png',
      caption: 'look',
      size: image.length,
      error: null,
    });
    expect(n.node.mediaCounters.snapshot().downloaded).to.equal(before.downloaded);
  });

  describe('POST /api/instance/s3 and GET /api/instance/getS3', () => {
    it('records wrong credentials as an error status with a readable cause; fixing them clears it', async () => {
      const name = fresh('creds');
      const { token } = await linked(name);
      const wrong = await api().post(
        `/api/instance/s3/${name}`,
        {
          enabled: true,
          bucket: 'media',
          accessKey: 'NOT-A-KEY',
          secretKey: 'wrong-secret-0001',
          endpoint: s3.endpoint,
        },
        { token },
      );
      expectOk(wrong);
      expect(wrong.body.message).to.equal('S3 configuration updated');
      expect(wrong.body.s3).to.include({
        enabled: true,
        bucket: 'media',
        accessKey: 'NOT-A-KEY',
        secretKey: null,
        status: 'error',
      });
      expect(wrong.body.s3.error).to.equal(
        'the access key id is not known to the storage service (InvalidAccessKeyId)',
      );
      expect(wrong.text).to.not.include('wrong-secret-0001');
      const read = await api().get(`/api/instance/getS3/${name}`, { token });
      expectOk(read);
      expect(read.body.s3).to.deep.equal(wrong.body.s3);

      const fixed = await api().post(
        `/api/instance/s3/${name}`,
        { accessKey: S3_ACCESS_KEY, secretKey: S3_SECRET_KEY },
        { token },
      );
      expect(fixed.body.s3).to.include({ status: 'ok', accessKey: S3_ACCESS_KEY });
      expect(fixed.body.s3).to.not.have.property('error');
      // Fields left out keep their values, the secret key included.
      const moved = await api().post(`/api/instance/s3/${name}`, { s3PathPrefix: 'elsewhere' }, { token });
      expect(moved.body.s3).to.include({ status: 'ok', pathPrefix: 'elsewhere', bucket: 'media' });
      expect(await s3.keys('media', 'elsewhere/')).to.deep.equal(['elsewhere/.switchboard-check']);
    });

    it('refuses what the creation block refuses, with its message, and changes nothing', async () => {
      const name = fresh('s3-invalid');
      const { token } = await linked(name, storageBody());
      const saved = (await api().get(`/api/instance/getS3/${name}`, { token })).body.s3;
      const cases: [unknown, string][] = [
        [{ bucket: 'Bad_Bucket' }, 's3Bucket is not a valid bucket name'],
        [{ enabled: true, bucket: '' }, 's3Bucket is required when storage is enabled'],
        [{ secretKey: '' }, 's3SecretKey is required when storage is enabled'],
        [{ region: 'us east' }, 's3Region is not a valid region name'],
        [{ endpoint: 'ftp://files.example.com' }, 's3Endpoint: only http and https URLs are allowed'],
        [
          { bucket: 'media', s3Bucket: 'media' },
          "Invalid request body: 's3Bucket' and 's3Bucket' are the same field; send only one",
        ],
        // An unknown field is ignored: with nothing else, there is nothing to save.
        [{ color: 'blue' }, 'At least one field must be provided'],
        [{ enabled: 'yes' }, "Invalid request body: field 's3Enabled': expected boolean, received string"],
        [{}, 'At least one field must be provided'],
        [[1], 'Invalid request body: expected a JSON object'],
      ];
      for (const [body, message] of cases) {
        expectError(await api().post(`/api/instance/s3/${name}`, body, { token }), 400, message);
      }
      expect((await api().get(`/api/instance/getS3/${name}`, { token })).body.s3).to.deep.equal(saved);
    });
  });

  describe('POST /api/instance/proxy and GET /api/instance/getProxy', () => {
    it('saves the proxy without ever returning the password, and reconnects when asked', async () => {
      const name = fresh('proxy');
      const { token } = await linked(name);
      const events = await n.record(token);
      const saved = await api().post(
        `/api/instance/proxy/${name}`,
        {
          enabled: true,
          host: 'proxy.example.com',
          port: '3128',
          protocol: 'socks5',
          username: 'alice',
          password: 'proxy-pass-0001',
        },
        { token },
      );
      expectOk(saved);
      expect(saved.body.proxy).to.deep.equal({
        enabled: true,
        host: 'proxy.example.com',
        port: '3128',
        protocol: 'socks5',
        user: 'alice',
        hasPassword: true,
      });
      expect(saved.body.reconnected).to.equal(false);
      expect(saved.text).to.not.include('proxy-pass-0001');
      const read = await api().get(`/api/instance/getProxy/${name}`, { token });
      expectOk(read);
      expect(read.body.proxy).to.deep.equal(saved.body.proxy);
      expect(read.text).to.not.include('proxy-pass-0001');
      const stored = await n.node.store.instances.findByTokenHash(hashToken(token));
      expect(stored!.config.proxy!.passwordSealed).to.be.a('string').and.not.include('proxy-pass-0001');

      const again = await api().post(`/api/instance/proxy/${name}`, { port: 1080, reconnect: true }, { token });
      expectOk(again);
      expect(again.body).to.include({ reconnected: true });
      expect(again.body.proxy).to.include({ port: '1080', hasPassword: true, host: 'proxy.example.com' });
      const states = () =>
        events.filter((e) => e.event === 'instance.state').map((e) => (e.data as any).state as string);
      await until(() => states().includes('connected'), 'the reconnect', 10_000);
      expect(states()).to.deep.equal(['disconnected', 'connecting', 'connected']);

      const cleared = await api().post(`/api/instance/proxy/${name}`, { password: '' }, { token });
      expect(cleared.body.proxy.hasPassword).to.equal(false);
    });

    it('refuses what the creation block refuses, with its message, and changes nothing', async () => {
      const name = fresh('proxy-invalid');
      const token = await n.idle(name);
      const cases: [unknown, string][] = [
        [{ enabled: true }, 'proxyHost is required when the proxy is enabled'],
        [{ enabled: true, host: 'proxy.example.com' }, 'proxyPort is required when the proxy is enabled'],
        [{ host: 'bad host!' }, 'proxyHost is not a valid host name or IP address'],
        [{ port: '70000' }, 'proxyPort must be a port number from 1 to 65535'],
        [{ protocol: 'ftp' }, 'proxyProtocol must be one of: http, https, socks5'],
        [{ host: 'proxy.example.com', reconnect: 'yes' }, "Invalid request body: field 'reconnect': expected boolean"],
        [
          { user: 'a', proxyUsername: 'b' },
          "Invalid request body: 'proxyUsername' and 'proxyUser' are the same field; send only one",
        ],
        [{ reconnect: true }, 'At least one field must be provided'],
      ];
      for (const [body, message] of cases) {
        expectError(await api().post(`/api/instance/proxy/${name}`, body, { token }), 400, message);
      }
      expect((await api().get(`/api/instance/getProxy/${name}`, { token })).body.proxy).to.deep.equal({
        enabled: false,
      });
    });
  });

  describe('GET /api/chat/media/:instance', () => {
    it('redirects to a fresh object URL for a stored file (or gives it with redirect=false)', async () => {
      const name = fresh('catchup-s3');
      const { token } = await linked(name, storageBody());
      const messageId = await sendImage(name, token);
      const res = await fetch(`${n.node.url}/api/chat/media/${name}?messageId=${messageId}`, {
        headers: { token },
        redirect: 'manual',
      });
      expect(res.status).to.equal(302);
      const location = res.headers.get('location')!;
      expect(Buffer.from(await (await fetch(location)).arrayBuffer()).equals(image)).to.equal(true);
      const json = await api().get(`/api/chat/media/${name}?messageId=${messageId}&redirect=false`, { token });
      expectOk(json);
      expect(json.body.media).to.include({ messageId, type: 'image', mimetype: 'image/png', source: 'storage' });
      expect(json.body.media.url).to.include(`/media/inbound/`);
    });

    it('GET /api/chat/base64 reads a stored file back from the bucket', async () => {
      const name = fresh('base64-s3');
      const { token } = await linked(name, storageBody());
      const messageId = await sendImage(name, token);
      const res = await api().get(`/api/chat/base64/${name}?messageId=${messageId}`, { token });
      expectOk(res);
      expect(res.body).to.deep.include({
        message_id: messageId,
        mime_type: 'image/png',
        media_type: 'image',
        base64: image.toString('base64'),
      });
    });

    it('gives the kept copy as base64, else downloads it again from the session', async () => {
      const kept = fresh('catchup-kept');
      const a = await linked(kept, { websocketEnabled: true, websocketBase64: true });
      const keptId = await sendImage(kept, a.token);
      const fromCache = await api().get(`/api/chat/media/${kept}?messageId=${keptId}`, { token: a.token });
      expectOk(fromCache);
      expect(fromCache.body.media).to.include({
        source: 'cache',
        base64: image.toString('base64'),
        fileName: 'photo.png',
        size: image.length,
      });

      const bare = fresh('catchup-session');
      const b = await linked(bare);
      const bareId = await sendImage(bare, b.token);
      const fromSession = await api().get(`/api/chat/media/${bare}?messageId=${bareId}`, { token: b.token });
      expectOk(fromSession);
      expect(fromSession.body.media).to.include({ source: 'session', base64: image.toString('base64') });
    });

    it('answers 400 without messageId and 404 for an unknown message, a message without media, or media no longer held', async () => {
      const name = fresh('catchup-errors');
      const { token } = await linked(name);
      const text = await api().post(`/api/sandbox/inbound/${name}`, { from: CONTACT, text: 'hello' }, { token });
      const described = await api().post(
        `/api/sandbox/inbound/${name}`,
        { from: CONTACT, media: { kind: 'document', mimetype: 'application/pdf' } },
        { token },
      );
      expectError(await api().get(`/api/chat/media/${name}`, { token }), 400, 'messageId is required');
      expectError(await api().get(`/api/chat/media/${name}?messageId=NOPE`, { token }), 404, 'Message not found');
      expectError(
        await api().get(`/api/chat/media/${name}?messageId=${text.body.messageId}`, { token }),
        404,
        'Message has no media',
      );
      expectError(
        await api().get(`/api/chat/media/${name}?messageId=${described.body.messageId}`, { token }),
        404,
        'Media is no longer available',
      );
      expectError(
        await api().get(`/api/chat/media/${name}?messageId=NOPE`, { token: 'not-a-token' }),
        401,
        'Invalid token',
      );
    });
  });
});
