import { isPlainObject } from '../../validation.js';
import type { AgentAttachment, HelpdeskInbound } from './helpdesk-calls.js';

/**
 * Reads the webhook Chatwoot posts to an API inbox's `webhook_url` (`message.webhook_data` plus `event`,
 * or the conversation's for conversation events). What concerns WhatsApp:
 * - `message_created`, `outgoing`, not private, not one of our own posts (`source_id` `WAID:…`): an
 *   agent's message to send;
 * - `conversation_status_changed`: a conversation resolved or reopened.
 * Everything else (incoming messages, our echoes, notes, typing, updates…) is ignored: undefined.
 */

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (isPlainObject(v) ? v : {});
const num = (v: unknown): number | undefined => (typeof v === 'number' && Number.isSafeInteger(v) ? v : undefined);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

function attachmentsOf(list: unknown): AgentAttachment[] {
  if (!Array.isArray(list)) return [];
  const out: AgentAttachment[] = [];
  for (const raw of list) {
    const a = obj(raw);
    const url = str(a.data_url);
    if (!url) continue;
    const fileName = str(a.file_name);
    out.push({ url, fileType: str(a.file_type) ?? 'file', ...(fileName ? { fileName } : {}) });
  }
  return out;
}

/** `outgoing` as a string (webhook top level) or 1 (the conversation's `messages[]`). */
const isOutgoing = (v: unknown) => v === 'outgoing' || v === 1;

export function parseChatwootWebhook(body: unknown): HelpdeskInbound | undefined {
  const b = obj(body);
  const conversation = obj(b.conversation);
  if (b.event === 'conversation_status_changed') {
    const conversationId = num(b.id);
    const inboxId = num(b.inbox_id);
    const status = str(b.status);
    if (conversationId === undefined || inboxId === undefined || !status) return undefined;
    return { kind: 'conversation-status', inboxId, conversationId, status };
  }
  if (b.event !== 'message_created') return undefined;
  const messageId = num(b.id);
  const conversationId = num(conversation.id);
  const inboxId = num(obj(b.inbox).id) ?? num(conversation.inbox_id);
  if (messageId === undefined || conversationId === undefined || inboxId === undefined) return undefined;
  const messages = Array.isArray(conversation.messages) ? conversation.messages.map(obj) : [];
  const echo = messages.find((m) => num(m.id) === messageId) ?? messages[0] ?? {};
  if (!isOutgoing(b.message_type) || b.private !== false) return undefined;
  const sourceId = str(b.source_id) ?? str(echo.source_id);
  if (sourceId?.startsWith('WAID:')) return undefined;
  // Older Chatwoot versions give the attachments only in the conversation's messages.
  const attachments = Array.isArray(b.attachments) ? attachmentsOf(b.attachments) : attachmentsOf(echo.attachments);
  const content = str(b.content) ?? '';
  if (!content.trim() && attachments.length === 0) return undefined;
  const sender = obj(b.sender);
  const contact = obj(obj(conversation.meta).sender);
  const identifier = str(contact.identifier);
  const phone = str(contact.phone_number);
  const senderName = str(sender.available_name) || str(sender.name);
  return {
    kind: 'agent-message',
    inboxId,
    messageId,
    conversationId,
    contact: { ...(identifier ? { identifier } : {}), ...(phone ? { phone } : {}) },
    content,
    ...(senderName ? { senderName } : {}),
    attachments,
  };
}
