import { expect } from 'chai';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectError, expectOk } from './support.js';

/**
 * Bodies read the way clients of the hosted product send them: a top-level field the route does not know
 * is ignored and named in `X-Ignored-Fields`; a known field stays strictly checked.
 */
describe('the tolerant reader: unknown fields ignored, known fields strict', () => {
  let n: NetworkNode;
  let token: string;

  before(async () => {
    n = await startNetworkNode({ ALLOW_PRIVATE_URLS: 'true' });
    token = await n.linked('reader', '5511700000001');
  });
  after(async () => {
    await n?.stop();
  });

  const ignored = (res: { headers: Headers }) => res.headers.get('x-ignored-fields');

  it('sends a text that carries fields of the hosted product it does not know, and names them', async () => {
    const res = await n.node.api.post(
      '/api/message/text/reader',
      { number: '5511700000002', message: 'hi', quotedMsg: true, trackingId: 'abc' },
      { token },
    );
    expectOk(res);
    expect(ignored(res)).to.equal('quotedMsg,trackingId');
    const [sent] = (await n.outbox('reader', token, '5511700000002')).slice(-1);
    expect(sent).to.deep.include({ type: 'text', text: 'hi' });
  });

  it('names no header when every field is known', async () => {
    const res = await n.node.api.post('/api/message/text/reader', { number: '5511700000002', text: 'hi' }, { token });
    expectOk(res);
    expect(ignored(res)).to.equal(null);
  });

  it('still refuses a known field of the wrong type, naming it, and sends nothing', async () => {
    const before = (await n.outbox('reader', token)).length;
    const res = await n.node.api.post(
      '/api/message/text/reader',
      { number: '5511700000002', message: 7, quotedMsg: true },
      { token },
    );
    expectError(res, 400, "Invalid request body: field 'message': expected string, received number");
    expect(ignored(res)).to.equal('quotedMsg');
    expect(await n.outbox('reader', token)).to.have.length(before);
  });

  it('keeps nested objects strict: an unknown field inside a known one is still a 400', async () => {
    expectError(
      await n.node.api.post('/api/profile/privacy/reader', { visibility: { lastseen: 'all' } }, { token }),
      400,
      "Invalid request body: unknown field 'lastseen' in 'visibility'",
    );
  });

  it('creates an instance from a body with unknown fields, its aliases still applied', async () => {
    const res = await n.node.api.post(
      '/api/instance/new',
      { name: 'tolerant', colour: 'blue', autoReadMessages: true, proxyUsername: 'u', clientVersion: 3 },
      { token: n.account },
    );
    expectOk(res, 201);
    expect(ignored(res)).to.equal('colour,clientVersion');
    expect(res.body.settings.autoReadMessages).to.equal(true);
  });

  it('applies settings and ignores what is not a setting', async () => {
    const res = await n.node.api.post(
      '/api/instance/settings/reader',
      { keepOnlineStatus: true, theme: 'dark' },
      { token },
    );
    expectOk(res);
    expect(ignored(res)).to.equal('theme');
    expect(res.body.settings.keepOnlineStatus).to.equal(true);
  });

  it("keeps a block's short names as known spellings", async () => {
    const res = await n.node.api.post('/api/instance/s3/reader', { bucket: 'media', region: 'x', note: 1 }, { token });
    expect(ignored(res)).to.equal('note');
  });

  it('names only header-safe field names as sent, and caps the list', async () => {
    const body: Record<string, unknown> = { number: '5511700000002', text: 'hi', 'bad name\r\n': 1, ação: 2 };
    for (let i = 0; i < 30; i++) body[`f${i}`] = i;
    const res = await n.node.api.post('/api/message/text/reader', body, { token });
    expectOk(res);
    const names = ignored(res)!.split(',');
    expect(names.slice(0, 2)).to.deep.equal(['bad%20name%0D%0A', 'a%C3%A7%C3%A3o']);
    expect(names).to.have.length(21);
    expect(names.at(-1)).to.equal('...');
  });
});
