import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.js';
import { ChatwootError, ChatwootHttp } from '../../src/integrations/helpdesk/chatwoot-http.js';
import { mergeHelpdeskPatch, parseHelpdeskPatch } from '../../src/integrations/helpdesk/helpdesk-settings.js';
import type { HelpdeskConfig } from '../../src/store/records.js';
import { markdownToWhatsapp, signed, whatsappToMarkdown } from '../../src/integrations/helpdesk/message-format.js';
import { parseChatwootWebhook } from '../../src/integrations/helpdesk/webhook-payload.js';
import { SecretBox, SecretPurpose } from '../../src/security/secret-box.js';

describe('helpdesk: configuration', () => {
  it('is on by default, with documented deadlines, and validates its variables', () => {
    expect(loadConfig({}).helpdesk).to.deep.equal({
      enabled: true,
      timeoutMs: 10_000,
      retries: 2,
      errorAfter: 3,
      retryIntervalMs: 30_000,
      webhookRatePerMinute: 1200,
    });
    expect(loadConfig({ HELPDESK_ENABLED: 'false' }).helpdesk.enabled).to.equal(false);
    expect(() => loadConfig({ HELPDESK_RETRIES: '11' })).to.throw(
      ConfigError,
      /^HELPDESK_RETRIES must be an integer from 0 to 10/,
    );
    expect(() => loadConfig({ HELPDESK_ENABLED: 'maybe' })).to.throw(
      ConfigError,
      /HELPDESK_ENABLED must be true or false/,
    );
  });
});

describe('helpdesk: message formats', () => {
  it('turns WhatsApp marks into Markdown and back', () => {
    expect(whatsappToMarkdown('a *bold* and _italic_ and ~gone~ word')).to.equal(
      'a **bold** and *italic* and ~~gone~~ word',
    );
    expect(markdownToWhatsapp('a **bold** and *italic* and ~~gone~~ word')).to.equal(
      'a *bold* and _italic_ and ~gone~ word',
    );
    expect(whatsappToMarkdown('2*3*4 stays')).to.equal('2*3*4 stays');
    expect(markdownToWhatsapp('**one**\n*two*')).to.equal('*one*\n_two_');
  });

  it('signs with the agent name on its own line, and only with a name', () => {
    expect(signed('Ana', 'hello')).to.equal('*Ana:*\nhello');
    expect(signed(' ', 'hello')).to.equal('hello');
    expect(signed(undefined, 'hello')).to.equal('hello');
  });
});

describe('helpdesk: Chatwoot webhook payloads', () => {
  const conversation = {
    id: 77,
    inbox_id: 3,
    status: 'open',
    meta: {
      sender: {
        id: 42,
        name: 'Ana',
        phone_number: '+5511988887777',
        identifier: '5511988887777@s.whatsapp.net',
        type: 'contact',
      },
    },
    messages: [
      {
        id: 555,
        message_type: 1,
        source_id: null,
        attachments: [{ data_url: 'https://cw.example.com/f/1.jpg', file_type: 'image' }],
      },
    ],
  };
  const agent = {
    event: 'message_created',
    id: 555,
    content: 'Hello **there**',
    message_type: 'outgoing',
    private: false,
    source_id: null,
    sender: { id: 1, name: 'John', available_name: 'Johnny', type: 'user' },
    inbox: { id: 3, name: 'WA' },
    conversation,
  };

  it("reads an agent's message, with the attachments of older versions from the conversation", () => {
    expect(parseChatwootWebhook(agent)).to.deep.equal({
      kind: 'agent-message',
      inboxId: 3,
      messageId: 555,
      conversationId: 77,
      contact: { identifier: '5511988887777@s.whatsapp.net', phone: '+5511988887777' },
      content: 'Hello **there**',
      senderName: 'Johnny',
      attachments: [{ url: 'https://cw.example.com/f/1.jpg', fileType: 'image' }],
    });
    const recent = parseChatwootWebhook({ ...agent, attachments: [] });
    expect(recent).to.include({ kind: 'agent-message' });
    expect((recent as { attachments: unknown[] }).attachments).to.deep.equal([]);
  });

  it('ignores notes, incoming messages, our own posts, other events and empty messages', () => {
    expect(parseChatwootWebhook({ ...agent, private: true })).to.equal(undefined);
    expect(parseChatwootWebhook({ ...agent, message_type: 'incoming' })).to.equal(undefined);
    expect(parseChatwootWebhook({ ...agent, source_id: 'WAID:ABC' })).to.equal(undefined);
    expect(
      parseChatwootWebhook({
        ...agent,
        conversation: { ...conversation, messages: [{ id: 555, source_id: 'WAID:ABC' }] },
      }),
    ).to.equal(undefined);
    expect(parseChatwootWebhook({ ...agent, event: 'message_updated' })).to.equal(undefined);
    expect(parseChatwootWebhook({ ...agent, content: ' ', conversation: { ...conversation, messages: [] } })).to.equal(
      undefined,
    );
    expect(parseChatwootWebhook('nonsense')).to.equal(undefined);
  });

  it('reads a conversation status change', () => {
    expect(
      parseChatwootWebhook({ ...conversation, status: 'resolved', event: 'conversation_status_changed' }),
    ).to.deep.equal({
      kind: 'conversation-status',
      inboxId: 3,
      conversationId: 77,
      status: 'resolved',
    });
  });
});

describe('helpdesk: the set body', () => {
  const secrets = new SecretBox(Buffer.alloc(32, 3));
  const o = { secrets, allowPrivateUrls: false };

  it('takes short, helpdesk… and chatwoot… names, seals the token, and maps enabled to paused', () => {
    const patch = parseHelpdeskPatch(
      {
        chatwootBaseUrl: 'https://cw.example.com',
        helpdeskAccountId: '12',
        apiToken: 'tok',
        enabled: false,
        inboxName: null,
      },
      o,
    );
    expect(patch).to.include({ baseUrl: 'https://cw.example.com/', accountId: 12, paused: true });
    expect(patch).to.not.have.property('inboxName');
    expect(secrets.open(patch.apiTokenSealed!, SecretPurpose.HelpdeskApiToken)).to.equal('tok');
    expect(parseHelpdeskPatch({}, o)).to.deep.equal({});
  });

  it('refuses two spellings, unknown fields, bad types and private URLs, naming the problem', () => {
    const refusal = (body: unknown) => {
      try {
        parseHelpdeskPatch(body, o);
      } catch (err) {
        return (err as Error).message;
      }
      return 'accepted';
    };
    expect(refusal({ signMessages: true, chatwootSignMessages: true })).to.equal(
      "Invalid request body: 'signMessages' and 'chatwootSignMessages' are the same field; send only one",
    );
    expect(refusal({ helpdeskColour: 'red' })).to.equal("Invalid request body: unknown field 'helpdeskColour'");
    expect(refusal({ ignoreGroups: 'yes' })).to.match(/^Invalid request body: field 'ignoreGroups'/);
    expect(refusal({ baseUrl: 'http://192.168.1.10' })).to.equal(
      'Invalid request body: baseUrl: URLs pointing to internal networks are not allowed',
    );
    expect(refusal([])).to.equal('Invalid request body: expected a JSON object');
  });
});

describe('helpdesk: merging a set into the stored integration', () => {
  const stored: HelpdeskConfig = {
    enabled: true,
    baseUrl: 'https://cw.example.com/',
    accountId: 4,
    apiTokenSealed: 'sealed',
    inboxName: 'Sales',
    signMessages: true,
    ignoreGroups: false,
    startAsPending: false,
    reopenResolved: false,
    inboxId: 9,
    status: 'error',
    lastError: 'down',
    webhookSecretSealed: 'secret',
  };

  it('keeps what the set does not send, re-checks the inbox and clears the last error', () => {
    expect(mergeHelpdeskPatch(stored, { reopenResolved: true })).to.deep.equal({
      ...stored,
      reopenResolved: true,
      inboxId: undefined,
      status: 'active',
      lastError: undefined,
    });
  });

  it('keeps a paused integration paused unless told, and activates a block sent disabled', () => {
    expect(mergeHelpdeskPatch({ ...stored, status: 'paused' }, {}).status).to.equal('paused');
    expect(mergeHelpdeskPatch({ ...stored, status: 'paused' }, { paused: false }).status).to.equal('active');
    expect(mergeHelpdeskPatch({ ...stored, enabled: false, status: 'paused' }, {})).to.include({
      enabled: true,
      status: 'active',
    });
  });

  it('needs baseUrl, accountId and apiToken for a new integration', () => {
    expect(() => mergeHelpdeskPatch(undefined, { baseUrl: 'https://x.example.com/', accountId: 1 })).to.throw(
      'Invalid request body: apiToken is required',
    );
    expect(() => mergeHelpdeskPatch(undefined, {})).to.throw('Invalid request body: baseUrl is required');
    expect(
      mergeHelpdeskPatch(undefined, { baseUrl: 'https://x.example.com/', accountId: 1, apiTokenSealed: 's' }),
    ).to.include({ inboxName: 'Switchboard', status: 'active' });
  });
});

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
