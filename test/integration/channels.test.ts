import { expect } from 'chai';
import sharp from 'sharp';
import type { EventEnvelope } from '../../src/events/instance-events.js';
import { pngImage, startFileServer } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const ALICE = '5511830000001';
const BOB = '5511830000002';
const CAROL = '5511830000003';
const DORA = '5511830000004';
const NOT_CONNECTED = 'Instance is not connected to WhatsApp';
const BAD_JID = 'Invalid jid: expected a channel JID (<digits>@newsletter)';
const UNKNOWN_CHANNEL = '120363999999999999@newsletter';

describe('channels (newsletters): create, list, info, publish, follow, unfollow', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let server: FileServer;
  let alice: string;
  let bob: string;
  let carol: string;
  let idle: string;
  let bobEvents: EventEnvelope[];
  let aliceEvents: EventEnvelope[];
  /** Alice's channel, created by the first test. */
  let channel: string;

  const post = (op: string, body: unknown, name = 'alice', token = alice) =>
    n.node.api.post(`/api/newsletter/${op}/${name}`, body, { token });
  const get = (op: string, query = '', name = 'alice', token = alice) =>
    n.node.api.get(`/api/newsletter/${op}/${name}${query}`, { token });
  const info = (jid: string, name = 'alice', token = alice) =>
    get('info', `?jid=${encodeURIComponent(jid)}`, name, token);
  /** The message.exchange of `id` among `events`, once it arrives. */
  const exchanged = async (events: EventEnvelope[], id: string) => {
    const find = () => events.find((e) => e.event === 'message.exchange' && (e.data as any).id === id);
    for (let i = 0; i < 150 && !find(); i++) await new Promise((r) => setTimeout(r, 20));
    expect(find(), `message.exchange of ${id}`).to.not.equal(undefined);
    return find()!.data as any;
  };

  before(async () => {
    [n, server] = await Promise.all([startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }), startFileServer()]);
    alice = await n.linked('alice', ALICE);
    bob = await n.linked('bob', BOB);
    carol = await n.linked('carol', CAROL);
    idle = await n.idle('channels-idle');
    server.serve('/logo.png', await pngImage(900, 300), 'image/png');
    bobEvents = await n.record(bob);
    aliceEvents = await n.record(alice);
  });

  after(async () => {
    await Promise.all([n?.stop(), server?.close()]);
  });

  it('create: a channel owned by the instance, with a picture by URL made a JPEG; listed as owned', async () => {
    const res = await post('create', { name: 'Alice News', description: 'Daily', picture: server.url('/logo.png') });
    expectOk(res);
    const created = res.body.channel;
    expect(created.jid).to.match(/^\d+@newsletter$/);
    expect(created).to.deep.include({ name: 'Alice News', description: 'Daily', role: 'owner', subscribers: 0 });
    expect(created.inviteLink).to.match(/^https:\/\/whatsapp\.com\/channel\/\S+$/);
    const jpeg = Buffer.from((created.pictureUrl as string).slice('data:image/jpeg;base64,'.length), 'base64');
    expect(await sharp(jpeg).metadata()).to.deep.include({ format: 'jpeg', width: 640, height: 213 });
    channel = created.jid;
    const [entry] = await n.outbox('alice', alice, channel);
    expect(entry).to.deep.include({ type: 'channel', to: channel });
    expect(entry.operation).to.deep.include({ name: 'create', channelName: 'Alice News', description: 'Daily' });

    const plain = await post('create', { name: 'Second' });
    expectOk(plain);
    expect(plain.body.channel).to.deep.include({ description: '', pictureUrl: null });
    const png = (await pngImage(20, 20)).toString('base64');
    expectOk(await post('create', { name: 'Third', picture: `data:image/png;base64,${png}` }));
    expectOk(await post('create', { name: 'Fourth', picture: png }));
    const list = await get('list');
    expectOk(list);
    expect(list.body.meta.total).to.equal(4);
    expect(list.body.channels.map((c: any) => c.role)).to.deep.equal(['owner', 'owner', 'owner', 'owner']);
  });

  it('create: refuses a missing name, a picture that is no image, and what the network fails', async () => {
    expectError(await post('create', { description: 'x' }), 400, 'name is required');
    const notImage = Buffer.from('not an image').toString('base64');
    expectError(
      await post('create', { name: 'X', picture: notImage }),
      400,
      'Invalid picture: the data is not a JPEG, PNG, WebP or GIF image',
    );
    expectError(
      await post('create', { name: 'X', picture: 'data:image/png;base64,@@' }),
      400,
      'Invalid request body: picture is not valid base64',
    );
    await n.fault('alice', alice, 'channels:create', 'server said no');
    expectError(await post('create', { name: 'X' }), 500, 'Failed to create the channel: server said no');
  });

  it('follow: another instance follows through the owner; both sides see it', async () => {
    const res = await post('follow', { jid: channel }, 'bob', bob);
    expectOk(res);
    expect(res.body).to.deep.include({ message: 'Channel followed', jid: channel });
    const bobList = await get('list', '', 'bob', bob);
    expect(bobList.body.channels).to.have.length(1);
    expect(bobList.body.channels[0]).to.deep.include({ jid: channel, name: 'Alice News', role: 'follower' });
    expect((await info(channel)).body.channel).to.deep.include({ subscribers: 1, role: 'owner' });
    expect((await n.outbox('bob', bob, channel)).at(-1)).to.deep.include({
      type: 'channel',
      operation: { name: 'follow' },
    });
  });

  it('info: an owned, a followed, and an unknown-to-the-instance channel (asked of its owner)', async () => {
    expect((await info(channel, 'bob', bob)).body.channel).to.deep.include({ role: 'follower', name: 'Alice News' });
    const asked = await info(channel, 'carol', carol);
    expectOk(asked);
    expect(asked.body.channel).to.deep.include({ jid: channel, role: 'none', subscribers: 1, name: 'Alice News' });
    expectError(await info(UNKNOWN_CHANNEL, 'carol', carol), 404, 'Channel not found');
    expectError(await get('info', '', 'carol', carol), 400, 'jid is required');
    expectError(await info('5511830000001@s.whatsapp.net'), 400, BAD_JID);
  });

  it('publish: a text and an image reach the follower as newsletter messages; only the owner publishes', async () => {
    const text = await post('publish', { jid: channel, message: 'Hello followers' });
    expectOk(text);
    expect(text.body.data).to.deep.include({ messageType: 'text', content: 'Hello followers', to: channel });
    const received = await exchanged(bobEvents, text.body.data.messageId);
    expect(received.direction).to.equal('incoming');
    expect(received.chat).to.deep.include({ jid: channel, type: 'newsletter', name: 'Alice News' });
    expect(received.message).to.deep.include({ type: 'text', content: { text: 'Hello followers' } });
    const own = await exchanged(aliceEvents, text.body.data.messageId);
    expect(own).to.deep.include({ direction: 'outgoing' });
    expect(own.chat.type).to.equal('newsletter');

    const png = (await pngImage(64, 64)).toString('base64');
    const image = await post('publish', { jid: channel, mediaType: 'image', mediaBase64: png, message: 'A picture' });
    expectOk(image);
    expect(image.body.data).to.deep.include({ messageType: 'image', content: 'A picture' });
    expect(image.body.data.media.mimetype).to.equal('image/jpeg');
    const media = await exchanged(bobEvents, image.body.data.messageId);
    expect(media.chat.type).to.equal('newsletter');
    expect(media.message.media).to.deep.include({ type: 'image', mimetype: 'image/jpeg', caption: 'A picture' });
    const out = (await n.outbox('alice', alice, channel)).at(-1);
    expect(out).to.deep.include({ type: 'channel', text: 'A picture', operation: { name: 'publish' } });
    expect(out.media).to.deep.include({ kind: 'image', mimetype: 'image/jpeg' });

    expectError(
      await post('publish', { jid: channel, message: 'mine now' }, 'bob', bob),
      403,
      "Only the channel's owner can publish",
    );
    expectError(
      await post('publish', { jid: UNKNOWN_CHANNEL, message: 'x' }, 'carol', carol),
      403,
      "Only the channel's owner can publish",
    );
  });

  it('publish: refuses a missing jid or text, a bad media type, two sources, and a failed upload', async () => {
    expectError(await post('publish', { message: 'x' }), 400, 'jid is required');
    expectError(await post('publish', { jid: 'news@newsletter', message: 'x' }), 400, BAD_JID);
    expectError(await post('publish', { jid: channel }), 400, 'message is required');
    expectError(
      await post('publish', { jid: channel, mediaType: 'gif', mediaUrl: server.url('/logo.png') }),
      400,
      'mediaType must be one of: image, video, audio, document',
    );
    expectError(
      await post('publish', { jid: channel, mediaType: 'image' }),
      400,
      'mediaUrl or mediaBase64 is required',
    );
    expectError(
      await post('publish', { jid: channel, mediaType: 'image', mediaUrl: server.url('/logo.png'), mediaBase64: 'AA' }),
      400,
      "Invalid request body: send 'mediaUrl' or 'mediaBase64', not both",
    );
    await n.fault('alice', alice, 'channels:publish', 'no route');
    expectError(
      await post('publish', { jid: channel, message: 'x' }),
      500,
      'Failed to publish on the channel: no route',
    );
  });

  it('unfollow: the follower leaves; the owner counts one follower less', async () => {
    const res = await post('unfollow', { jid: channel }, 'bob', bob);
    expectOk(res);
    expect(res.body).to.deep.include({ message: 'Channel unfollowed', jid: channel });
    expect((await get('list', '', 'bob', bob)).body.channels).to.deep.equal([]);
    expect((await info(channel)).body.channel.subscribers).to.equal(0);
    expect((await n.outbox('bob', bob, channel)).at(-1).operation).to.deep.equal({ name: 'unfollow' });
  });

  it('follow and unfollow: refuse a bad or unknown channel, and the owner following its own', async () => {
    for (const op of ['follow', 'unfollow']) {
      expectError(await post(op, {}, 'bob', bob), 400, 'jid is required');
      expectError(await post(op, { jid: '120363@g.us' }, 'bob', bob), 400, BAD_JID);
      expectError(await post(op, { jid: UNKNOWN_CHANNEL }, 'bob', bob), 404, 'Channel not found');
      expectError(await post(op, { jid: channel }), 409, 'This number owns the channel');
    }
  });

  it('an owner that is offline cannot answer: the follow times out (504)', async () => {
    const dora = await n.linked('dora', DORA);
    const created = await post('create', { name: 'Dora Daily' }, 'dora', dora);
    expectOk(created);
    const jid = created.body.channel.jid as string;
    expectOk(await post('follow', { jid }, 'bob', bob));
    expectOk(await n.node.api.post('/api/instance/logout/dora', undefined, { token: dora }));
    // Bob still listens on the channel's JID, but the only phone that keeps the channel is gone.
    expectError(await post('follow', { jid }, 'carol', carol), 504, 'WhatsApp did not answer in time');
  });

  it('every operation follows the instance states and errors of the text send', async () => {
    const bodies: [string, string, unknown][] = [
      ['post', 'create', { name: 'X' }],
      ['get', 'list', undefined],
      ['get', 'info', undefined],
      ['post', 'publish', { jid: channel, message: 'x' }],
      ['post', 'follow', { jid: channel }],
      ['post', 'unfollow', { jid: channel }],
    ];
    for (const [method, op, body] of bodies) {
      const query = op === 'info' ? `?jid=${channel}` : '';
      const call = (name: string, token: string, suffix = `/${name}`) =>
        method === 'get'
          ? n.node.api.get(`/api/newsletter/${op}${suffix}${query}`, { token })
          : n.node.api.post(`/api/newsletter/${op}${suffix}`, body, { token });
      expectError(await call('channels-idle', idle), 400, NOT_CONNECTED);
      expectError(await call('nope', n.account), 404, 'Instance not found');
      expectError(await call('', n.account, ''), 400, 'Instance name is required');
    }
  });
});
