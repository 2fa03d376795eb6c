import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.js';
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
        chatwootBaseUrl: 'https://cw.example.com/',
        helpdeskAccountId: '12',
        apiToken: 'tok',
        enabled: false,
        inboxName: null,
      },
      o,
    );
    expect(patch).to.include({ baseUrl: 'https://cw.example.com', accountId: 12, paused: true });
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
      // A base URL stored with its trailing slash loses it, as a set's chatwootBaseUrl does.
      baseUrl: 'https://cw.example.com',
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
