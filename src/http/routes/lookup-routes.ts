import Router from '@koa/router';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { MessageStatus } from '../../store/records.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { toRecipient } from '../route-helpers.js';

/** The numeric codes clients of the hosted product read (WhatsApp's own ack levels). */
const STATUS_CODE: Record<MessageStatus, number> = { failed: 0, pending: 1, sent: 2, received: 3, delivered: 3, read: 4, played: 5 };

/** Lookups clients need: is a number on WhatsApp, and where did a message get to. */
export function lookupRoutes(deps: ActorRouteDeps) {
  const router = new Router<AppState>({ prefix: '/api/chat' });
  const guard = requireInstance(deps.store, deps.auth);
  const query = (value: unknown) => (typeof value === 'string' ? value.trim() : '');

  router.get('/contacts/:instance', guard, async (ctx) => {
    const raw = query(ctx.query.number);
    if (!raw) throw new ValidationError('Number is required');
    const contact = await deps.runtime.router.call(ctx.state.instance!.id, 'msgnet.lookup', { number: toRecipient(raw) }, deps.callTimeoutMs);
    ctx.body = {
      success: true,
      message: contact.found ? 'Number is on WhatsApp' : 'Number is not on WhatsApp',
      contact: { found: contact.found, jid: contact.jid ?? null, lid: contact.lid ?? null },
    };
  });

  router.get('/status/:instance', guard, async (ctx) => {
    const messageId = query(ctx.query.messageId);
    if (!messageId) throw new ValidationError('messageId is required');
    const m = await deps.store.messages.find(ctx.state.instance!.id, messageId);
    if (!m) throw new NotFoundError('Message not found');
    const status: MessageStatus = m.status ?? (m.fromMe ? 'sent' : 'received');
    ctx.body = {
      success: true,
      message: 'Message status found',
      message_id: m.id,
      status,
      status_code: STATUS_CODE[status],
      direction: m.fromMe ? 'outgoing' : 'incoming',
      chat_jid: m.chatJid,
      timestamp: new Date(m.timestamp).toISOString(),
    };
  });

  return router;
}
