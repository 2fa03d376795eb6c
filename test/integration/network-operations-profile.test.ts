import { expect } from 'chai';
import sharp from 'sharp';
import { corruptPng, pixelBombPng, pngImage, startFileServer, streamBytes } from '../helpers/media-fixtures.js';
import type { FileServer } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

const MESSAGE = 'Profile updated successfully';
const INTERNAL = 'URL refused: URLs pointing to internal networks are not allowed';
const dataUrl = (png: Buffer) => `data:image/png;base64,${png.toString('base64')}`;

describe('network operations: profile (sandbox, HTTP)', function () {
  this.timeout(30_000);
  // `open` may fetch from the local test server (ALLOW_PRIVATE_URLS); `strict` is configured as in production.
  let open: NetworkNode;
  let strict: NetworkNode;
  let server: FileServer;
  let token: string;
  let strictToken: string;

  const update = (body: unknown, node = open, name = 'me', t = token) =>
    node.node.api.post(`/api/profile/account/${name}`, body, { token: t });
  const phone = async (node = open, name = 'me', t = token) => {
    const res = await node.node.api.get(`/api/sandbox/profile/${name}`, { token: t });
    expectOk(res);
    return res.body.profile;
  };

  before(async () => {
    [open, strict, server] = await Promise.all([
      startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' }),
      startNetworkNode(),
      startFileServer(),
    ]);
    token = await open.linked('me', '5511400000001');
    strictToken = await strict.linked('me', '5511400000009');
    server.serve('/portrait.png', await pngImage(500, 1000, '#aa3300'), 'image/png');
    server.serve('/page.html', Buffer.from('<html><body>not an image</body></html>'), 'image/png');
    server.serve('/bomb.png', pixelBombPng(), 'image/png');
    server.route('/huge.png', streamBytes(50 * 1024 * 1024, { bytes: 0 }));
  });

  after(async () => {
    await Promise.all([open?.stop(), strict?.stop(), server?.close()]);
  });

  it('sets picture (data URL), name and status: the fixed message and the changed fields; the picture is JPEG ≤ 640x640', async () => {
    const res = await update({
      profilePicture: dataUrl(await pngImage(1000, 500)),
      profileName: 'Ana Sales',
      profileStatus: 'At work',
    });
    expectOk(res);
    expect(res.body).to.deep.equal({
      success: true,
      message: MESSAGE,
      updatedFields: ['profilePicture', 'profileName', 'profileStatus'],
    });
    const held = await phone();
    expect(held).to.include({ name: 'Ana Sales', status: 'At work' });
    const meta = await sharp(Buffer.from(held.picture, 'base64')).metadata();
    expect(meta).to.include({ format: 'jpeg', width: 640, height: 320 });
    const list = await open.node.api.get('/api/instance/list?instanceName=me', { token });
    expect(JSON.stringify(list.body)).to.include('Ana Sales');
  });

  it('lists only what really changed: the same values again change nothing', async () => {
    const same = await update({
      profilePicture: dataUrl(await pngImage(1000, 500)),
      profileName: 'Ana Sales',
      profileStatus: 'At work',
    });
    expectOk(same);
    expect(same.body.updatedFields).to.deep.equal([]);
    const one = await update({ profileName: 'Ana Sales', profileStatus: 'Back at 3' });
    expect(one.body.updatedFields).to.deep.equal(['profileStatus']);
  });

  it('takes a public URL; an empty picture removes it; an empty name is a no-op; an empty status clears it', async () => {
    const fromUrl = await update({ profilePicture: server.url('/portrait.png') });
    expectOk(fromUrl);
    expect(fromUrl.body.updatedFields).to.deep.equal(['profilePicture']);
    expect(await sharp(Buffer.from((await phone()).picture, 'base64')).metadata()).to.include({
      width: 320,
      height: 640,
    });
    expect((await update({ profilePicture: '' })).body.updatedFields).to.deep.equal(['profilePicture']);
    expect((await phone()).picture).to.equal(null);
    expect((await update({ profilePicture: '' })).body.updatedFields).to.deep.equal([]);
    expect((await update({ profileName: '' })).body.updatedFields).to.deep.equal([]);
    expect((await phone()).name).to.equal('Ana Sales');
    expect((await update({ profileStatus: '' })).body.updatedFields).to.deep.equal(['profileStatus']);
    expect((await phone()).status).to.equal('');
  });

  it('answers the spec 400s: no field, not connected; and refuses malformed fields', async () => {
    expectError(
      await update({}),
      400,
      'At least one field must be provided (profilePicture, profileName, or profileStatus)',
    );
    const idleToken = await open.node.createInstance(open.account, { name: 'idle-two' });
    expectError(
      await update({ profileName: 'X' }, open, 'idle-two', idleToken),
      400,
      'Instance is not connected to WhatsApp',
    );
    expectError(
      await update({ profilePicture: 'ftp://example.com/a.png' }),
      400,
      'Invalid request body: profilePicture must be an http(s) URL, a base64 data URL, or an empty string',
    );
    expectError(
      await update({ profilePicture: 'data:image/png;base64,@@@' }),
      400,
      'Invalid request body: profilePicture is not valid base64',
    );
    // An unknown field is ignored: with nothing else, there is nothing to update.
    expectError(
      await update({ nickname: 'x' }),
      400,
      'At least one field must be provided (profilePicture, profileName, or profileStatus)',
    );
    expectError(
      await update({ profileName: 5 }),
      400,
      "Invalid request body: field 'profileName': expected string, received number",
    );
    expectError(
      await open.node.api.post('/api/profile/account/', { profileName: 'x' }, { token: open.account }),
      400,
      'Instance name is required',
    );
    expectError(
      await open.node.api.post('/api/profile/account/ghost', { profileName: 'x' }, { token: open.account }),
      404,
      'Instance not found',
    );
  });

  it('answers the four 500 messages when processing or the network fails', async () => {
    const processing = await update({ profilePicture: dataUrl(corruptPng()) });
    expect(processing.status).to.equal(500);
    expect(processing.body.error.message).to.match(/^failed to process profile picture: .+/);
    for (const [operation, field, body] of [
      ['updateProfile:picture', 'picture', { profilePicture: dataUrl(await pngImage(30, 30)) }],
      ['updateProfile:name', 'name', { profileName: 'Someone' }],
      ['updateProfile:status', 'status', { profileStatus: 'Busy' }],
    ] as const) {
      await open.fault('me', token, operation, 'not-authorized');
      expectError(await update(body), 500, `failed to set profile ${field}: not-authorized`);
    }
  });

  it('refuses URLs into internal networks with 400 and changes nothing (no ALLOW_PRIVATE_URLS)', async () => {
    expectOk(await update({ profileName: 'Strict', profileStatus: 'unchanged' }, strict, 'me', strictToken));
    const before = await phone(strict, 'me', strictToken);
    const hitsBefore = server.hits.get('/portrait.png') ?? 0;
    for (const url of [
      server.url('/portrait.png'),
      `http://10.0.0.8:${server.port}/portrait.png`,
      'http://169.254.169.254/latest/meta-data/',
      `http://[::1]:${server.port}/portrait.png`,
      `http://localhost:${server.port}/portrait.png`,
      'http://[::ffff:127.0.0.1]/portrait.png',
    ]) {
      expectError(
        await update({ profilePicture: url, profileName: 'Hacked' }, strict, 'me', strictToken),
        400,
        INTERNAL,
      );
    }
    expect(await phone(strict, 'me', strictToken)).to.deep.equal(before);
    expect(server.hits.get('/portrait.png') ?? 0).to.equal(hitsBefore);
  });

  it('refuses a 50 MB image, a non-image and a pixel bomb with 400, changing nothing', async () => {
    const before = await phone();
    const huge = await update({ profilePicture: server.url('/huge.png'), profileStatus: 'should not apply' });
    expectError(huge, 400, `Failed to download media from URL: the body is larger than ${16 * 1024 * 1024} bytes`);
    expect(huge.body.error.code).to.equal('media_download_failed');
    expectError(
      await update({ profilePicture: server.url('/page.html') }),
      400,
      'Invalid profilePicture: the data is not a JPEG, PNG, WebP or GIF image',
    );
    expectError(
      await update({ profilePicture: server.url('/bomb.png') }),
      400,
      'Invalid profilePicture: the image is 30000x30000 pixels; at most 40000000 pixels are accepted',
    );
    expectError(
      await update({ profilePicture: dataUrl(pixelBombPng()) }),
      400,
      'Invalid profilePicture: the image is 30000x30000 pixels; at most 40000000 pixels are accepted',
    );
    expectError(
      await update({ profilePicture: server.url('/missing.png') }),
      400,
      'Failed to download media from URL: HTTP 404',
    );
    expect(await phone()).to.deep.equal(before);
  });
});
