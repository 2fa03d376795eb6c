import { ChatwootError, ChatwootHttp } from './chatwoot-http.js';
import type { ChatwootHttpOptions, FilePart } from './chatwoot-http.js';

/**
 * The part of Chatwoot's Application API the bridge uses (`/api/v1/accounts/{account_id}/…`, see
 * docs/helpdesk.md). Each method is one request and never retries by itself: callers wrap whole
 * find-or-create operations in `retrying`, so that an attempt after a timeout first finds what the
 * timed-out attempt may already have created.
 */

export interface CwInbox {
  id: number;
  name: string;
  channel_type?: string;
  webhook_url?: string | null;
}

export interface CwContactInbox {
  source_id: string;
  inbox?: { id: number } | null;
}

export interface CwContact {
  id: number;
  name?: string | null;
  phone_number?: string | null;
  identifier?: string | null;
  contact_inboxes?: CwContactInbox[] | null;
}

/** `open | resolved | pending | snoozed`. */
export type CwConversationStatus = 'open' | 'resolved' | 'pending' | 'snoozed';

export interface CwConversation {
  /** The display id, the one used in URLs. */
  id: number;
  inbox_id: number;
  status: CwConversationStatus;
}

export interface CwMessage {
  id: number;
  source_id?: string | null;
}

export interface NewMessage {
  content: string;
  messageType: 'incoming' | 'outgoing';
  private: boolean;
  /** `WAID:<WhatsApp message id>`, how the bridge recognises its own posts. */
  sourceId?: string;
  attachment?: { fileName: string; contentType: string; data: Buffer };
}

export interface ChatwootClientOptions extends ChatwootHttpOptions {
  accountId: number;
}

const protocol = (what: string) => new ChatwootError('protocol', `Chatwoot ${what}: unexpected answer`);

function hasId(value: unknown): value is { id: number } {
  return typeof value === 'object' && value !== null && typeof (value as { id?: unknown }).id === 'number';
}

/** `{payload: [...]}` (lists and searches) as an array of records with an id. */
function payloadList<T>(body: unknown, what: string): T[] {
  const payload = (body as { payload?: unknown } | null)?.payload;
  if (!Array.isArray(payload)) throw protocol(what);
  return payload.filter(hasId) as T[];
}

function record<T>(body: unknown, what: string): T {
  if (!hasId(body)) throw protocol(what);
  return body as T;
}

export class ChatwootClient {
  readonly #http: ChatwootHttp;
  readonly #account: string;

  constructor(o: ChatwootClientOptions) {
    this.#http = new ChatwootHttp(o);
    this.#account = `/api/v1/accounts/${o.accountId}`;
  }

  retrying<T>(op: (attempt: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.#http.retrying(op, signal);
  }

  async listInboxes(signal?: AbortSignal): Promise<CwInbox[]> {
    return payloadList<CwInbox>(
      await this.#http.request('GET', `${this.#account}/inboxes`, undefined, signal),
      'inbox list',
    );
  }

  async createApiInbox(name: string, webhookUrl: string, signal?: AbortSignal): Promise<CwInbox> {
    const body = { json: { name, channel: { type: 'api', webhook_url: webhookUrl } } };
    return record<CwInbox>(
      await this.#http.request('POST', `${this.#account}/inboxes`, body, signal),
      'inbox creation',
    );
  }

  async setInboxWebhook(inboxId: number, webhookUrl: string, signal?: AbortSignal): Promise<void> {
    await this.#http.request(
      'PATCH',
      `${this.#account}/inboxes/${inboxId}`,
      { json: { channel: { webhook_url: webhookUrl } } },
      signal,
    );
  }

  /** Contacts whose phone number is exactly `phone` (`+5511…`). */
  async filterContactsByPhone(phone: string, signal?: AbortSignal): Promise<CwContact[]> {
    const body = {
      json: {
        payload: [
          { attribute_key: 'phone_number', filter_operator: 'equal_to', values: [phone], query_operator: null },
        ],
      },
    };
    return payloadList<CwContact>(
      await this.#http.request('POST', `${this.#account}/contacts/filter`, body, signal),
      'contact filter',
    );
  }

  /** Contacts whose name, identifier, email or phone contains `q`. */
  async searchContacts(q: string, signal?: AbortSignal): Promise<CwContact[]> {
    const path = `${this.#account}/contacts/search?q=${encodeURIComponent(q)}&include_contact_inboxes=true`;
    return payloadList<CwContact>(await this.#http.request('GET', path, undefined, signal), 'contact search');
  }

  /** Creates a contact with its contact inbox in `inboxId`; returns it and that inbox's source id. */
  async createContact(
    c: { inboxId: number; name: string; phone?: string; identifier: string },
    signal?: AbortSignal,
  ): Promise<{ contact: CwContact; sourceId: string | undefined }> {
    const json = {
      inbox_id: c.inboxId,
      name: c.name,
      identifier: c.identifier,
      ...(c.phone ? { phone_number: c.phone } : {}),
    };
    const body = await this.#http.request<{ payload?: { contact?: unknown; contact_inbox?: CwContactInbox | null } }>(
      'POST',
      `${this.#account}/contacts`,
      { json },
      signal,
    );
    const contact = record<CwContact>(body?.payload?.contact, 'contact creation');
    return { contact, sourceId: body.payload?.contact_inbox?.source_id ?? undefined };
  }

  /** Adds the contact to the inbox; returns the new contact inbox's source id. */
  async createContactInbox(contactId: number, inboxId: number, signal?: AbortSignal): Promise<string> {
    const body = await this.#http.request<CwContactInbox | null>(
      'POST',
      `${this.#account}/contacts/${contactId}/contact_inboxes`,
      { json: { inbox_id: inboxId } },
      signal,
    );
    if (typeof body?.source_id !== 'string') throw protocol('contact inbox creation');
    return body.source_id;
  }

  async contactConversations(contactId: number, signal?: AbortSignal): Promise<CwConversation[]> {
    const body = await this.#http.request(
      'GET',
      `${this.#account}/contacts/${contactId}/conversations`,
      undefined,
      signal,
    );
    return payloadList<CwConversation>(body, 'contact conversations');
  }

  async getConversation(conversationId: number, signal?: AbortSignal): Promise<CwConversation> {
    return record<CwConversation>(
      await this.#http.request('GET', `${this.#account}/conversations/${conversationId}`, undefined, signal),
      'conversation',
    );
  }

  async createConversation(
    c: { inboxId: number; contactId: number; sourceId: string | undefined; status: 'open' | 'pending' },
    signal?: AbortSignal,
  ): Promise<CwConversation> {
    const json = {
      inbox_id: c.inboxId,
      contact_id: c.contactId,
      status: c.status,
      ...(c.sourceId ? { source_id: c.sourceId } : {}),
    };
    return record<CwConversation>(
      await this.#http.request('POST', `${this.#account}/conversations`, { json }, signal),
      'conversation creation',
    );
  }

  async toggleStatus(conversationId: number, status: CwConversationStatus, signal?: AbortSignal): Promise<void> {
    await this.#http.request(
      'POST',
      `${this.#account}/conversations/${conversationId}/toggle_status`,
      { json: { status } },
      signal,
    );
  }

  /** Posts a message: JSON, or multipart with the file as `attachments[]`. */
  async createMessage(conversationId: number, m: NewMessage, signal?: AbortSignal): Promise<CwMessage> {
    const path = `${this.#account}/conversations/${conversationId}/messages`;
    let body;
    if (m.attachment) {
      const file: FilePart = {
        name: 'attachments[]',
        fileName: m.attachment.fileName,
        contentType: m.attachment.contentType,
        data: m.attachment.data,
      };
      body = {
        form: [
          ['content', m.content] as const,
          ['message_type', m.messageType] as const,
          ['private', String(m.private)] as const,
          ...(m.sourceId ? [['source_id', m.sourceId] as const] : []),
          file,
        ],
      };
    } else {
      body = {
        json: {
          content: m.content,
          message_type: m.messageType,
          private: m.private,
          ...(m.sourceId ? { source_id: m.sourceId } : {}),
        },
      };
    }
    return record<CwMessage>(await this.#http.request('POST', path, body, signal), 'message creation');
  }

  /** The conversation's latest messages (Chatwoot returns the last 20). */
  async listMessages(conversationId: number, signal?: AbortSignal): Promise<CwMessage[]> {
    const body = await this.#http.request(
      'GET',
      `${this.#account}/conversations/${conversationId}/messages`,
      undefined,
      signal,
    );
    return payloadList<CwMessage>(body, 'message list');
  }
}
