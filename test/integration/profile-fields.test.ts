import { expect } from 'chai';
import { pngImage } from '../helpers/media-fixtures.js';
import { expectError, expectOk } from './support.js';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';

describe('profile: info, and name, status and picture one field at a time (sandbox, HTTP)', function () {
  this.timeout(30_000);
  let n: NetworkNode;
  let token: string;
  const info = async () => {
    const res = await n.node.api.get('/api/profile/info/me', { token });
    expectOk(res);
    return res.body.profile;
  };
  const post = (field: string, body: unknown, name = 'me', t = token) =>
    n.node.api.post(`/api/profile/${field}/${name}`, body, { token: t });

  before(async () => {
    n = await startNetworkNode();
    token = await n.linked('me', '5511830000001');
  });

  after(async () => {
    await n?.stop();
  });

  it('info: the linked number, its name, About and picture; no business profile for a personal account', async () => {
    expect(await info()).to.deep.include({
      jid: '5511830000001@s.whatsapp.net',
      isBusiness: false,
      business: null,
      pictureUrl: null,
    });
  });

  it('name and status change one field; a repeat reports nothing changed', async () => {
    let res = await post('name', { name: 'Dora Store' });
    expectOk(res);
    expect(res.body.updatedFields).to.deep.equal(['profileName']);
    expect((await post('name', { name: 'Dora Store' })).body.updatedFields).to.deep.equal([]);
    res = await post('status', { status: 'Open 9 to 6' });
    expect(res.body.updatedFields).to.deep.equal(['profileStatus']);
    expect(await info()).to.deep.include({ name: 'Dora Store', about: 'Open 9 to 6' });
    expect((await post('status', { status: '' })).body.updatedFields).to.deep.equal(['profileStatus']);
    expect((await info()).about).to.equal('');
    expectError(await post('name', {}), 400, 'name is required');
    expectError(await post('status', {}), 400, 'status is required');
    const long = await post('name', { name: 'x'.repeat(26) });
    expect(long.status).to.equal(400);
    expect(long.body.error.message).to.include('name');
  });

  it('picture: set from a data URL (a JPEG), removed with DELETE', async () => {
    const png = await pngImage(800, 600);
    const res = await post('picture', { picture: `data:image/png;base64,${png.toString('base64')}` });
    expectOk(res);
    expect(res.body.updatedFields).to.deep.equal(['profilePicture']);
    expect((await info()).pictureUrl).to.match(/^data:image\/jpeg;base64,\/9j\//);
    const removed = await n.node.api.request('DELETE', '/api/profile/picture/me', undefined, { token });
    expectOk(removed);
    expect(removed.body.updatedFields).to.deep.equal(['profilePicture']);
    expect((await info()).pictureUrl).to.equal(null);
    expectError(await post('picture', {}), 400, 'picture is required');
    expectError(
      await post('picture', { picture: 'not a url' }),
      400,
      'Invalid request body: picture must be an http(s) URL, a base64 data URL, or an empty string',
    );
    expectError(
      await post('picture', { picture: `data:image/png;base64,${Buffer.from('nope').toString('base64')}` }),
      400,
      'Invalid picture: the data is not a JPEG, PNG, WebP or GIF image',
    );
  });

  it('every field answers the state errors of the account update', async () => {
    const idle = await n.idle('profile-idle');
    const spec = await n.node.api.post('/api/profile/account/profile-idle', { profileName: 'x' }, { token: idle });
    for (const [field, body] of [
      ['name', { name: 'x' }],
      ['status', { status: 'x' }],
      ['picture', { picture: 'data:image/png;base64,AAAA' }],
    ] as const) {
      const res = await post(field, body, 'profile-idle', idle);
      expect([res.status, res.body.error?.message], field).to.deep.equal([spec.status, spec.body.error.message]);
      expectError(await n.node.api.post(`/api/profile/${field}`, body, { token }), 400, 'Instance name is required');
    }
    const del = await n.node.api.request('DELETE', '/api/profile/picture/profile-idle', undefined, { token: idle });
    expect(del.status).to.equal(spec.status);
    const get = await n.node.api.get('/api/profile/info/profile-idle', { token: idle });
    expect([get.status, get.body.error.message]).to.deep.equal([spec.status, spec.body.error.message]);
  });
});
