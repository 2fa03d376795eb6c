import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { MessageStatus } from '../../store/records.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { toRecipient } from '../route-helpers.js';

/** The numeric codes clients of the hosted product read (WhatsApp's own ack levels). */
const STATUS_CODE: Record<MessageStatus, number> = {
  failed: 0,
  pending: 1,
  sent: 2,
  received: 3,
  delivered: 3,
  read: 4,
  played: 5,
};

/** Lookups clients need: is a number on WhatsApp, and where did a message get to. */
export function lookupRoutes(deps: ActorRouteDeps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Chats' });
  const guard = requireInstance(deps.store, deps.auth);

  api.route(
    {
      method: 'get',
      path: '/contacts/:instance',
      summary: 'Is a number on WhatsApp',
      auth: guard,
      query: z.object({ number: queryParam.text('Phone number with country code (required)') }),
      responses: { 200: '`{contact: {found, jid, lid}}`' },
    },
    async (ctx, { query }) => {
      const raw = query.number;
      if (!raw) throw new ValidationError('Number is required');
      const contact = await deps.actors
        .for(ctx)
        .call(ctx.state.instance!.id, 'msgnet.lookup', { number: toRecipient(raw) });
      ctx.body = {
        success: true,
        message: contact.found ? 'Number is on WhatsApp' : 'Number is not on WhatsApp',
        contact: { found: contact.found, jid: contact.jid ?? null, lid: contact.lid ?? null },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/status/:instance',
      summary: 'Where a message got to (sent, delivered, read…)',
      auth: guard,
      query: z.object({ messageId: queryParam.text('The message (required)') }),
      responses: {
        200: '`{message_id, status, status_code, direction, chat_jid, timestamp}`',
        404: 'Message not found',
      },
    },
    async (ctx, { query }) => {
      const messageId = query.messageId;
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
    },
  );

  return api;
}
