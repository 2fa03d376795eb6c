import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ChatwootError, ChatwootHttp } from '../../src/integrations/helpdesk/chatwoot-http.js';

describe('helpdesk: HTTP to Chatwoot', () => {
  let server: Server;
  let answer: (req: IncomingMessage, res: ServerResponse, n: number) => void;
  let seen: { method: string; url: string; token: string | undefined; type: string; body: string }[];
  let base: string;

  before(async () => {
    server = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('latin1')));
      req.on('end', () => {
        seen.push({
          method: req.method!,
          url: req.url!,
          token: req.headers.api_access_token as string | undefined,
          type: String(req.headers['content-type'] ?? ''),
          body,
        });
        answer(req, res, seen.length);
      });
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/chatwoot`;
  });

  beforeEach(() => {
    seen = [];
  });

  after(async () => {
    server.closeAllConnections();
    await new Promise<void>((r) => server.close(() => r()));
  });

  const http = (o: Partial<ConstructorParameters<typeof ChatwootHttp>[0]> = {}) =>
    new ChatwootHttp({
      baseUrl: base,
      apiToken: 'secret-token',
      timeoutMs: 300,
      retries: 2,
      allowPrivateUrls: true,
      retryBaseMs: 5,
      ...o,
    });
  const json = (res: ServerResponse, status: number, body: unknown) => {
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
  };

  it('sends the api_access_token header below the base path and parses JSON', async () => {
    answer = (_q, res) => json(res, 200, { payload: [] });
    expect(await http().request('POST', '/api/v1/accounts/1/contacts/filter', { json: { a: 1 } })).to.deep.equal({
      payload: [],
    });
    expect(seen[0]).to.include({
      method: 'POST',
      url: '/chatwoot/api/v1/accounts/1/contacts/filter',
      token: 'secret-token',
      type: 'application/json',
      body: '{"a":1}',
    });
  });

  it('encodes multipart with the file under its field name', async () => {
    answer = (_q, res) => json(res, 200, { id: 1 });
    await http().request('POST', '/x', {
      form: [
        ['content', 'hi'] as const,
        { name: 'attachments[]', fileName: 'a.png', contentType: 'image/png', data: Buffer.from([0, 255]) },
      ],
    });
    expect(seen[0]!.type).to.match(/^multipart\/form-data; boundary=/);
    expect(seen[0]!.body).to.include('name="content"\r\n\r\nhi\r\n');
    expect(seen[0]!.body).to.include(
      'name="attachments[]"; filename="a.png"\r\nContent-Type: image/png\r\n\r\n\u0000\u00ff\r\n',
    );
  });

  it('retries 5xx, 429 and timeouts a bounded number of times, then gives up', async () => {
    answer = (_q, res, n) => (n < 3 ? json(res, n === 1 ? 502 : 429, { error: 'busy' }) : json(res, 200, { ok: true }));
    const h = http();
    expect(await h.retrying(() => h.request('GET', '/x'))).to.deep.equal({ ok: true });
    expect(seen).to.have.length(3);

    seen = [];
    answer = (_q, res) => json(res, 500, { error: 'down' });
    const err = await h.retrying(() => h.request('GET', '/x')).catch((e: unknown) => e);
    expect(err).to.be.instanceOf(ChatwootError).and.include({ failure: 'http', status: 500, retryable: true });
    expect((err as Error).message).to.equal('Chatwoot GET /x: HTTP 500 down');
    expect(seen).to.have.length(3);

    seen = [];
    answer = () => undefined;
    const slow = await h.retrying(() => h.request('GET', '/x')).catch((e: unknown) => e);
    expect(slow).to.be.instanceOf(ChatwootError).and.include({ failure: 'timeout', retryable: true });
    expect(seen).to.have.length(3);
  });

  it('never retries a 4xx', async () => {
    answer = (_q, res) => json(res, 401, { error: 'Invalid Access Token' });
    const h = http();
    const err = await h.retrying(() => h.request('GET', '/api/v1/accounts/1/inboxes')).catch((e: unknown) => e);
    expect(err).to.include({ status: 401, retryable: false, rejectsCredentials: true });
    expect((err as Error).message).to.equal('Chatwoot GET /inboxes: HTTP 401 Invalid Access Token');
    expect(seen).to.have.length(1);
  });

  it('refuses private addresses unless allowed, without sending anything', async () => {
    const err = await http({ allowPrivateUrls: false })
      .request('GET', '/x')
      .catch((e: unknown) => e);
    expect(err).to.include({ failure: 'refused', retryable: false });
    expect(seen).to.have.length(0);
  });

  it('stops at once when aborted', async () => {
    answer = () => undefined;
    const abort = new AbortController();
    const h = http({ timeoutMs: 5000 });
    const pending = h
      .retrying(() => h.request('GET', '/x', undefined, abort.signal), abort.signal)
      .catch((e: unknown) => e);
    setTimeout(() => abort.abort(), 30);
    expect(await pending).to.include({ failure: 'aborted' });
    expect(seen).to.have.length(1);
  });
});
