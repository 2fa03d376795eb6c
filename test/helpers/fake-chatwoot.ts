import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A small Chatwoot that follows the Application API the bridge uses (`/api/v1/accounts/:id/…`, header
 * `api_access_token`): inboxes (list, create, update), contacts (search, filter, create, contact
 * inboxes, conversations), conversations (create, show, toggle_status), messages (create as JSON or
 * multipart, list). Like Chatwoot, it POSTs `message_created` for every message of an API inbox, and
 * `conversation_status_changed` on a status change, to the inbox's `webhook_url`, with the payload shape
 * of `webhook_listener.rb`. Tests play the agent with `agentReply` and `resolve`, and break it with `fail`.
 */

export interface FakeInbox {
  id: number;
  name: string;
  channel_type: string;
  webhook_url: string | null;
}

export interface FakeContact {
  id: number;
  name: string;
  phone_number: string | null;
  identifier: string | null;
}

export interface FakeContactInbox {
  id: number;
  contact_id: number;
  inbox_id: number;
  source_id: string;
}

export interface FakeConversation {
  id: number;
  inbox_id: number;
  contact_id: number;
  contact_inbox_id: number;
  status: 'open' | 'resolved' | 'pending' | 'snoozed';
}

export interface FakeAttachment {
  id: number;
  message_id: number;
  file_type: string;
  data_url: string;
  file_size: number;
  extension: string;
  contentType: string;
  data: Buffer;
}

export interface FakeMessage {
  id: number;
  conversation_id: number;
  content: string;
  message_type: 'incoming' | 'outgoing';
  private: boolean;
  source_id: string | null;
  sender: { id: number; name: string; type: 'user' | 'contact' };
  attachments: FakeAttachment[];
  created_at: number;
}

export interface WebhookDelivery {
  url: string;
  body: any;
  status: number | undefined;
}

type Failure = { status: number } | { delayMs: number } | 'timeout' | null;

const MESSAGE_TYPE = { incoming: 0, outgoing: 1 } as const;

class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly body: unknown,
  ) {
    super(`HTTP ${status}`);
  }
}

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

/** A multipart/form-data body: fields, and files with their type and bytes. */
function parseMultipart(
  raw: Buffer,
  contentType: string,
): { fields: Record<string, string>; files: { name: string; fileName: string; contentType: string; data: Buffer }[] } {
  const boundary = /boundary=(?:"([^"]+)"|([^;]+))/.exec(contentType);
  if (!boundary) throw new HttpError(400, { error: 'no boundary' });
  const delimiter = Buffer.from(`--${boundary[1] ?? boundary[2]}`);
  const fields: Record<string, string> = {};
  const files: { name: string; fileName: string; contentType: string; data: Buffer }[] = [];
  let start = raw.indexOf(delimiter);
  while (start !== -1) {
    const next = raw.indexOf(delimiter, start + delimiter.length);
    if (next === -1) break;
    const part = raw.subarray(start + delimiter.length + 2, next - 2);
    const headerEnd = part.indexOf('\r\n\r\n');
    const headers = part.subarray(0, headerEnd).toString('utf8');
    const data = part.subarray(headerEnd + 4);
    const name = /name="([^"]*)"/.exec(headers)?.[1] ?? '';
    const fileName = /filename="([^"]*)"/.exec(headers)?.[1];
    if (fileName !== undefined) {
      files.push({
        name,
        fileName,
        contentType: /content-type:\s*([^\r\n]+)/i.exec(headers)?.[1] ?? 'application/octet-stream',
        data: Buffer.from(data),
      });
    } else fields[name] = data.toString('utf8');
    start = next;
  }
  return { fields, files };
}

const fileType = (mime: string) =>
  mime.startsWith('image/')
    ? 'image'
    : mime.startsWith('audio/')
      ? 'audio'
      : mime.startsWith('video/')
        ? 'video'
        : 'file';

export class FakeChatwoot {
  readonly token = 'cw-access-token-0123456789';
  readonly accountId = 7;
  readonly inboxes: FakeInbox[] = [];
  readonly contacts: FakeContact[] = [];
  readonly contactInboxes: FakeContactInbox[] = [];
  readonly conversations: FakeConversation[] = [];
  readonly messages: FakeMessage[] = [];
  readonly webhooks: WebhookDelivery[] = [];
  /** Every API request, in arrival order (`GET /inboxes`…, below the account). */
  readonly requests: string[] = [];
  #failure: Failure = null;
  #seq = 100;
  #server!: Server;
  #hanging: ServerResponse[] = [];
  #pending = new Set<Promise<void>>();

  static async start(): Promise<FakeChatwoot> {
    const fake = new FakeChatwoot();
    fake.#server = createServer((req, res) => {
      void fake.#handle(req, res);
    });
    await new Promise<void>((resolve) => fake.#server.listen(0, '127.0.0.1', resolve));
    return fake;
  }

  get url(): string {
    return `http://127.0.0.1:${(this.#server.address() as AddressInfo).port}`;
  }

  /**
   * From now on every API call fails: with this HTTP status, by never answering (`timeout`), or by doing
   * its work but answering only after `delayMs` (what a client that timed out must not repeat).
   */
  fail(mode: { status: number } | { delayMs: number } | 'timeout'): void {
    this.#failure = mode;
  }

  recover(): void {
    this.#failure = null;
    for (const res of this.#hanging.splice(0)) res.destroy();
  }

  /** Resolves when every webhook POST started so far has been answered. */
  async settled(): Promise<void> {
    while (this.#pending.size > 0) await Promise.allSettled([...this.#pending]);
  }

  async stop(): Promise<void> {
    this.recover();
    await this.settled();
    this.#server.closeAllConnections();
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
  }

  messagesOf(conversationId: number): FakeMessage[] {
    return this.messages.filter((m) => m.conversation_id === conversationId);
  }

  conversationsOf(contactId: number): FakeConversation[] {
    return this.conversations.filter((c) => c.contact_id === contactId);
  }

  contactByIdentifier(identifier: string): FakeContact | undefined {
    return this.contacts.find((c) => c.identifier === identifier);
  }

  /**
   * An agent (or, with `private`, a note) answers in a conversation: the message is created and its
   * `message_created` webhook posted; resolves with the message once the webhook was answered.
   */
  async agentReply(
    conversationId: number,
    reply: {
      content: string;
      private?: boolean;
      agent?: string;
      attachments?: { contentType: string; data: Buffer; fileName: string }[];
    },
  ): Promise<{ message: FakeMessage; webhookStatus: number | undefined }> {
    const conversation = this.#conversation(conversationId);
    const agent = reply.agent ?? 'Ana Agent';
    const message = this.#createMessage(conversation, {
      content: reply.content,
      message_type: 'outgoing',
      private: reply.private ?? false,
      source_id: null,
      sender: { id: 1, name: agent, type: 'user' },
      files: reply.attachments ?? [],
    });
    await this.settled();
    return {
      message,
      webhookStatus: this.webhooks
        .filter((w) => w.body?.id === message.id && w.body?.event === 'message_created')
        .at(-1)?.status,
    };
  }

  /** Posts a webhook again, as a proxy or a retrying sender might; resolves with the answer's status. */
  async redeliver(delivery: WebhookDelivery): Promise<number> {
    const res = await fetch(delivery.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(delivery.body),
    });
    await res.arrayBuffer();
    return res.status;
  }

  /** An agent resolves the conversation (toggle_status), which Chatwoot announces by webhook. */
  async resolve(conversationId: number): Promise<void> {
    this.#setStatus(this.#conversation(conversationId), 'resolved');
    await this.settled();
  }

  // ---- the API --------------------------------------------------------------------------------

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    if (req.method === 'GET' && url.pathname.startsWith('/rails/active_storage/blobs/')) {
      const id = Number(url.pathname.split('/')[4]);
      const file = this.messages.flatMap((m) => m.attachments).find((a) => a.id === id);
      if (!file) return this.#send(res, 404, { error: 'not found' });
      res.writeHead(200, { 'content-type': file.contentType, 'content-length': file.data.length });
      res.end(file.data);
      return;
    }
    const raw = await readBody(req);
    const account = /^\/api\/v1\/accounts\/(\d+)(\/.*)$/.exec(url.pathname);
    if (!account) return this.#send(res, 404, { error: 'Not Found' });
    const path = account[2]!;
    this.requests.push(`${req.method} ${path}`);
    if (this.#failure === 'timeout') {
      this.#hanging.push(res);
      return;
    }
    if (this.#failure && 'status' in this.#failure) {
      return this.#send(res, this.#failure.status, { error: 'Internal Server Error' });
    }
    const delayMs = this.#failure?.delayMs ?? 0;
    if (req.headers.api_access_token !== this.token) return this.#send(res, 401, { error: 'Invalid Access Token' });
    if (Number(account[1]) !== this.accountId) return this.#send(res, 404, { error: 'Resource could not be found' });
    try {
      const contentType = String(req.headers['content-type'] ?? '');
      const body = contentType.startsWith('multipart/form-data')
        ? parseMultipart(raw, contentType)
        : raw.length
          ? { fields: JSON.parse(raw.toString('utf8')) as Record<string, any>, files: [] }
          : { fields: {} as Record<string, any>, files: [] };
      const [status, answer] = this.#route(req.method ?? 'GET', path, url.searchParams, body);
      if (delayMs > 0) setTimeout(() => this.#send(res, status, answer), delayMs);
      else this.#send(res, status, answer);
    } catch (err) {
      if (err instanceof HttpError) this.#send(res, err.status, err.body);
      else this.#send(res, 500, { error: (err as Error).message });
    }
  }

  #send(res: ServerResponse, status: number, body: unknown): void {
    if (res.destroyed) return;
    res.writeHead(status, { 'content-type': 'application/json; charset=utf-8' });
    res.end(JSON.stringify(body));
  }

  #route(
    method: string,
    path: string,
    query: URLSearchParams,
    body: {
      fields: Record<string, any>;
      files: { name: string; fileName: string; contentType: string; data: Buffer }[];
    },
  ): [number, unknown] {
    const f = body.fields;
    let m: RegExpExecArray | null;
    if (method === 'GET' && path === '/inboxes') return [200, { payload: this.inboxes.map((i) => this.#inboxView(i)) }];
    if (method === 'POST' && path === '/inboxes') {
      if (!f.name || f.channel?.type !== 'api') {
        throw new HttpError(422, { message: 'Name and an api channel are required' });
      }
      const inbox: FakeInbox = {
        id: this.#id(),
        name: String(f.name),
        channel_type: 'Channel::Api',
        webhook_url: f.channel.webhook_url ?? null,
      };
      this.inboxes.push(inbox);
      return [200, this.#inboxView(inbox)];
    }
    if (method === 'PATCH' && (m = /^\/inboxes\/(\d+)$/.exec(path))) {
      const inbox = this.inboxes.find((i) => i.id === Number(m![1]));
      if (!inbox) throw new HttpError(404, { error: 'Resource could not be found' });
      if (f.channel?.webhook_url !== undefined) inbox.webhook_url = f.channel.webhook_url;
      if (f.name) inbox.name = f.name;
      return [200, this.#inboxView(inbox)];
    }
    if (method === 'GET' && path === '/contacts/search') {
      const q = (query.get('q') ?? '').toLowerCase();
      const found = this.contacts.filter((c) =>
        [c.name, c.phone_number, c.identifier].some((v) => v?.toLowerCase().includes(q)),
      );
      return [200, { meta: { count: found.length, current_page: 1 }, payload: found.map((c) => this.#contactView(c)) }];
    }
    if (method === 'POST' && path === '/contacts/filter') {
      const rule = f.payload?.[0];
      if (rule?.attribute_key !== 'phone_number' || rule.filter_operator !== 'equal_to') {
        throw new HttpError(422, { message: 'unsupported filter' });
      }
      const found = this.contacts.filter((c) => c.phone_number === rule.values[0]);
      return [200, { meta: { count: found.length, current_page: 1 }, payload: found.map((c) => this.#contactView(c)) }];
    }
    if (method === 'POST' && path === '/contacts') return [200, this.#createContact(f)];
    if (method === 'POST' && (m = /^\/contacts\/(\d+)\/contact_inboxes$/.exec(path))) {
      const contact = this.#contact(Number(m[1]));
      const inbox = this.inboxes.find((i) => i.id === Number(f.inbox_id));
      if (!inbox) throw new HttpError(422, { message: 'Inbox not found' });
      const ci = this.#addContactInbox(contact.id, inbox.id, f.source_id);
      return [200, { id: ci.id, source_id: ci.source_id, inbox: this.#inboxView(inbox) }];
    }
    if (method === 'GET' && (m = /^\/contacts\/(\d+)\/conversations$/.exec(path))) {
      const contact = this.#contact(Number(m[1]));
      return [200, { payload: this.conversationsOf(contact.id).map((c) => this.#conversationView(c)) }];
    }
    if (method === 'POST' && path === '/conversations') {
      return [200, this.#conversationView(this.#createConversation(f))];
    }
    if (method === 'GET' && (m = /^\/conversations\/(\d+)$/.exec(path))) {
      return [200, this.#conversationView(this.#conversation(Number(m[1])))];
    }
    if (method === 'POST' && (m = /^\/conversations\/(\d+)\/toggle_status$/.exec(path))) {
      const conversation = this.#conversation(Number(m[1]));
      if (!['open', 'resolved', 'pending', 'snoozed'].includes(f.status)) {
        throw new HttpError(422, { message: 'invalid status' });
      }
      this.#setStatus(conversation, f.status);
      return [
        200,
        { meta: {}, payload: { success: true, current_status: conversation.status, conversation_id: conversation.id } },
      ];
    }
    if ((m = /^\/conversations\/(\d+)\/messages$/.exec(path))) {
      const conversation = this.#conversation(Number(m[1]));
      if (method === 'GET') {
        return [
          200,
          {
            meta: {},
            payload: this.messagesOf(conversation.id)
              .slice(-20)
              .map((x) => this.#messageView(x)),
          },
        ];
      }
      if (method === 'POST') {
        const type = f.message_type ?? 'outgoing';
        if (type !== 'incoming' && type !== 'outgoing') throw new HttpError(422, { message: 'invalid message_type' });
        const contact = this.#contact(conversation.contact_id);
        const message = this.#createMessage(conversation, {
          content: String(f.content ?? ''),
          message_type: type,
          private: f.private === true || f.private === 'true',
          source_id: f.source_id ?? null,
          sender:
            type === 'incoming'
              ? { id: contact.id, name: contact.name, type: 'contact' }
              : { id: 1, name: 'API', type: 'user' },
          files: body.files.filter((x) => x.name === 'attachments[]'),
        });
        return [200, this.#messageView(message)];
      }
    }
    throw new HttpError(404, { error: 'Resource could not be found' });
  }

  #id(): number {
    return ++this.#seq;
  }

  #contact(id: number): FakeContact {
    const contact = this.contacts.find((c) => c.id === id);
    if (!contact) throw new HttpError(404, { error: 'Resource could not be found' });
    return contact;
  }

  #conversation(id: number): FakeConversation {
    const conversation = this.conversations.find((c) => c.id === id);
    if (!conversation) throw new HttpError(404, { error: 'Resource could not be found' });
    return conversation;
  }

  #createContact(f: Record<string, any>) {
    const phone = f.phone_number ?? null;
    if (phone !== null && !/^\+\d{6,15}$/.test(phone)) {
      throw new HttpError(422, { message: 'Phone number should be in e164 format', attributes: ['phone_number'] });
    }
    if (f.identifier && this.contacts.some((c) => c.identifier === f.identifier)) {
      throw new HttpError(422, { message: 'Identifier has already been taken', attributes: ['identifier'] });
    }
    if (phone && this.contacts.some((c) => c.phone_number === phone)) {
      throw new HttpError(422, { message: 'Phone number has already been taken', attributes: ['phone_number'] });
    }
    const contact: FakeContact = {
      id: this.#id(),
      name: String(f.name ?? ''),
      phone_number: phone,
      identifier: f.identifier ?? null,
    };
    this.contacts.push(contact);
    let contactInbox: FakeContactInbox | undefined;
    if (f.inbox_id !== undefined) {
      if (!this.inboxes.some((i) => i.id === Number(f.inbox_id))) {
        throw new HttpError(422, { message: 'Inbox not found' });
      }
      contactInbox = this.#addContactInbox(contact.id, Number(f.inbox_id), undefined);
    }
    return {
      payload: {
        contact: this.#contactView(contact),
        contact_inbox: contactInbox
          ? {
              inbox: this.#inboxView(this.inboxes.find((i) => i.id === contactInbox.inbox_id)!),
              source_id: contactInbox.source_id,
            }
          : null,
      },
    };
  }

  #addContactInbox(contactId: number, inboxId: number, sourceId: string | undefined): FakeContactInbox {
    const ci: FakeContactInbox = {
      id: this.#id(),
      contact_id: contactId,
      inbox_id: inboxId,
      source_id: sourceId ?? `src-${this.#id()}`,
    };
    this.contactInboxes.push(ci);
    return ci;
  }

  #createConversation(f: Record<string, any>): FakeConversation {
    const inboxId = Number(f.inbox_id);
    if (!this.inboxes.some((i) => i.id === inboxId)) throw new HttpError(422, { message: 'Inbox not found' });
    let ci = f.source_id
      ? this.contactInboxes.find((c) => c.source_id === f.source_id && c.inbox_id === inboxId)
      : undefined;
    if (!ci && f.contact_id !== undefined) {
      const contact = this.#contact(Number(f.contact_id));
      // ConversationsController#contact_inbox: the contact's inbox, built when missing.
      ci =
        this.contactInboxes.find((c) => c.contact_id === contact.id && c.inbox_id === inboxId) ??
        this.#addContactInbox(contact.id, inboxId, undefined);
    }
    if (!ci) throw new HttpError(422, { message: 'Contact inbox not found' });
    const status = f.status ?? 'open';
    if (status !== 'open' && status !== 'pending') throw new HttpError(422, { message: 'invalid status' });
    const conversation: FakeConversation = {
      id: this.#id(),
      inbox_id: inboxId,
      contact_id: ci.contact_id,
      contact_inbox_id: ci.id,
      status,
    };
    this.conversations.push(conversation);
    return conversation;
  }

  #createMessage(
    conversation: FakeConversation,
    m: Omit<FakeMessage, 'id' | 'conversation_id' | 'attachments' | 'created_at'> & {
      files: { contentType: string; data: Buffer; fileName: string }[];
    },
  ): FakeMessage {
    const id = this.#id();
    const attachments = m.files.map((file) => {
      const attachmentId = this.#id();
      return {
        id: attachmentId,
        message_id: id,
        file_type: fileType(file.contentType),
        data_url: `${this.url}/rails/active_storage/blobs/${attachmentId}/${encodeURIComponent(file.fileName)}`,
        file_size: file.data.length,
        extension: file.fileName.split('.').pop() ?? '',
        contentType: file.contentType,
        data: file.data,
      };
    });
    const { files: _files, ...rest } = m;
    const message: FakeMessage = {
      id,
      conversation_id: conversation.id,
      attachments,
      created_at: Math.floor(Date.now() / 1000),
      ...rest,
    };
    this.messages.push(message);
    // Message#reopen_resolved_conversation: an incoming message reopens a resolved conversation.
    if (
      message.message_type === 'incoming' &&
      (conversation.status === 'resolved' || conversation.status === 'snoozed')
    ) {
      this.#setStatus(conversation, 'open');
    }
    this.#deliver(conversation, { ...this.#messageWebhook(message, conversation), event: 'message_created' });
    return message;
  }

  #setStatus(conversation: FakeConversation, status: FakeConversation['status']): void {
    if (conversation.status === status) return;
    conversation.status = status;
    this.#deliver(conversation, {
      ...this.#conversationView(conversation),
      event: 'conversation_status_changed',
      changed_attributes: [{ status: { current_value: status } }],
    });
  }

  #deliver(conversation: FakeConversation, body: unknown): void {
    const url = this.inboxes.find((i) => i.id === conversation.inbox_id)?.webhook_url;
    if (!url) return;
    const delivery: WebhookDelivery = { url, body, status: undefined };
    this.webhooks.push(delivery);
    // lib/webhooks/trigger.rb: one POST with a 5 s timeout, no retry.
    const sending = fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: AbortSignal.timeout(5000),
    })
      .then(async (res) => {
        delivery.status = res.status;
        await res.arrayBuffer();
      })
      .catch(() => undefined)
      .finally(() => this.#pending.delete(sending));
    this.#pending.add(sending);
  }

  // ---- views as the jbuilder templates render them --------------------------------------------

  #inboxView(i: FakeInbox) {
    return {
      id: i.id,
      name: i.name,
      channel_type: i.channel_type,
      webhook_url: i.webhook_url,
      greeting_enabled: false,
    };
  }

  #contactView(c: FakeContact) {
    return {
      id: c.id,
      name: c.name,
      phone_number: c.phone_number,
      identifier: c.identifier,
      email: null,
      thumbnail: '',
      additional_attributes: {},
      custom_attributes: {},
      contact_inboxes: this.contactInboxes
        .filter((ci) => ci.contact_id === c.id)
        .map((ci) => ({
          source_id: ci.source_id,
          inbox: this.#inboxView(this.inboxes.find((i) => i.id === ci.inbox_id)!),
        })),
    };
  }

  #conversationView(c: FakeConversation) {
    const contact = this.#contact(c.contact_id);
    const ci = this.contactInboxes.find((x) => x.id === c.contact_inbox_id)!;
    return {
      id: c.id,
      account_id: this.accountId,
      inbox_id: c.inbox_id,
      status: c.status,
      channel: 'Channel::Api',
      contact_inbox: { id: ci.id, contact_id: ci.contact_id, inbox_id: ci.inbox_id, source_id: ci.source_id },
      meta: {
        sender: {
          id: contact.id,
          name: contact.name,
          phone_number: contact.phone_number,
          identifier: contact.identifier,
          type: 'contact',
        },
        assignee: null,
      },
      messages: this.messagesOf(c.id)
        .slice(-1)
        .map((m) => ({ ...this.#messageView(m), message_type: MESSAGE_TYPE[m.message_type] })),
    };
  }

  #attachmentView(a: FakeAttachment) {
    return {
      id: a.id,
      message_id: a.message_id,
      file_type: a.file_type,
      data_url: a.data_url,
      thumb_url: a.data_url,
      file_size: a.file_size,
      extension: a.extension,
    };
  }

  #messageView(m: FakeMessage) {
    return {
      id: m.id,
      content: m.content,
      conversation_id: m.conversation_id,
      message_type: MESSAGE_TYPE[m.message_type],
      content_type: 'text',
      content_attributes: {},
      private: m.private,
      source_id: m.source_id,
      created_at: m.created_at,
      sender: { ...m.sender, available_name: m.sender.name },
      attachments: m.attachments.map((a) => this.#attachmentView(a)),
    };
  }

  /** `message.webhook_data`: string message_type, the sender, inbox, account and conversation. */
  #messageWebhook(m: FakeMessage, c: FakeConversation) {
    const inbox = this.inboxes.find((i) => i.id === c.inbox_id)!;
    return {
      id: m.id,
      content: m.content,
      created_at: new Date(m.created_at * 1000).toISOString(),
      message_type: m.message_type,
      content_type: 'text',
      content_attributes: {},
      private: m.private,
      source_id: m.source_id,
      sender: { id: m.sender.id, name: m.sender.name, available_name: m.sender.name, type: m.sender.type },
      inbox: { id: inbox.id, name: inbox.name },
      account: { id: this.accountId, name: 'Acme' },
      conversation: this.#conversationView(c),
      ...(m.attachments.length ? { attachments: m.attachments.map((a) => this.#attachmentView(a)) } : {}),
    };
  }
}
