import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import type { HistoryCursor, MessageRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { chatAddress, nameRequired } from '../route-helpers.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
}

export const HISTORY_DEFAULT_LIMIT = 50;
export const HISTORY_MAX_LIMIT = 500;

export const historyQuery = z.object({
  chat: queryParam.text('Only this chat: a number, a JID or status@broadcast'),
  limit: queryParam
    .text(`Messages per page, 1 to ${HISTORY_MAX_LIMIT}; default ${HISTORY_DEFAULT_LIMIT}`)
    .transform((raw, ctx) => {
      if (raw === undefined) return HISTORY_DEFAULT_LIMIT;
      const n = Number(raw);
      if (Number.isInteger(n) && n >= 1 && n <= HISTORY_MAX_LIMIT) return n;
      ctx.addIssue({ code: 'custom', message: `limit must be an integer from 1 to ${HISTORY_MAX_LIMIT}` });
      return z.NEVER;
    }),
  before: queryParam.text(
    'Older than this: a message id from an earlier page (meta.nextBefore), Unix milliseconds, or an RFC 3339 time',
  ),
});

const historyBody = z.strictObject({
  number: z.string().trim().max(128).optional().describe('The chat: a number, a JID or status@broadcast (required)'),
  count: z
    .number()
    .int()
    .min(1)
    .max(HISTORY_MAX_LIMIT)
    .optional()
    .describe(`How many, newest first (default ${HISTORY_DEFAULT_LIMIT}, up to ${HISTORY_MAX_LIMIT})`),
  from: z.string().trim().max(64).optional().describe('Not older than this (ISO 8601)'),
  to: z.string().trim().max(64).optional().describe('Not newer than this (ISO 8601)'),
});

/** An ISO 8601 date of the hosted product's history body, in Unix milliseconds. */
function dateOf(raw: string | undefined, field: 'from' | 'to'): number | undefined {
  if (raw === undefined || raw === '') return undefined;
  const parsed = /^\d{4}-\d\d-\d\d/.test(raw) ? Date.parse(raw) : Number.NaN;
  if (Number.isNaN(parsed)) {
    throw new ValidationError(`invalid '${field}' date format. Use ISO 8601 format (e.g., '2026-02-16T18:32:39Z')`);
  }
  return parsed;
}

/** `before` = a message id from an earlier page (exact paging), or a time: Unix milliseconds or RFC 3339. */
export async function cursorOf(
  store: Store,
  instanceId: string,
  raw: string | undefined,
): Promise<HistoryCursor | undefined> {
  if (raw === undefined) return undefined;
  const ref = await store.messages.find(instanceId, raw);
  if (ref) return { timestamp: ref.timestamp, id: ref.id };
  if (/^\d{1,15}$/.test(raw)) return { timestamp: Number(raw) };
  const parsed = Date.parse(raw);
  if (!Number.isNaN(parsed) && /^\d{4}-\d\d-\d\dT/.test(raw)) return { timestamp: parsed };
  throw new ValidationError('before must be a message id from the history, Unix milliseconds, or an RFC 3339 time');
}

export function messageView(m: MessageRecord) {
  return {
    id: m.id,
    chat: { jid: m.chatJid, isGroup: m.chatJid.endsWith('@g.us') },
    direction: m.fromMe ? 'outgoing' : 'incoming',
    sender: m.senderJid,
    timestamp: new Date(m.timestamp).toISOString(),
    type: m.type,
    text: m.text,
    source: m.source ?? null,
    // Where the file was stored stays internal; GET /api/chat/media gives the file itself.
    media: m.media
      ? {
          kind: m.media.kind,
          mimetype: m.media.mimetype,
          ...(m.media.fileName ? { fileName: m.media.fileName } : {}),
          ...(m.media.size !== undefined ? { size: m.media.size } : {}),
        }
      : null,
  };
}

/**
 * The chat history kept in the store (for catch-up after a WebSocket gap): newest first, any node
 * answers it without reaching the instance's owner.
 */
export function historyRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Chats', maxBodyBytes: deps.maxBodyBytes });
  nameRequired(api, 'get', '/history', deps.auth);

  api.route(
    {
      method: 'get',
      path: '/history/:instance',
      summary: 'The chat history, newest first',
      description: 'Kept in the store for MESSAGE_RETENTION_DAYS; any node answers without reaching the instance.',
      auth: requireInstance(deps.store, deps.auth),
      query: historyQuery,
      responses: {
        200: '`{messages: [{id, chat, direction, sender, timestamp, type, text, media}], meta: {count, hasMore, nextBefore}}`',
      },
    },
    async (ctx, { query }) => {
      const instanceId = ctx.state.instance!.id;
      const { chat, limit } = query;
      const before = await cursorOf(deps.store, instanceId, query.before);
      const rows = await deps.store.messages.list(instanceId, {
        ...(chat ? { chatJid: chatAddress(chat) } : {}),
        ...(before ? { before } : {}),
        limit: limit + 1,
      });
      const page = rows.slice(0, limit);
      const hasMore = rows.length > limit;
      ctx.body = {
        success: true,
        message: 'History retrieved successfully',
        messages: page.map(messageView),
        meta: { count: page.length, hasMore, nextBefore: hasMore ? page[page.length - 1]!.id : null },
      };
    },
  );

  // The hosted product's form: POST with the chat, a count and a date range, newest first.
  nameRequired(api, 'post', '/history', deps.auth);
  api.route(
    {
      method: 'post',
      path: '/history/:instance',
      summary: "One chat's messages between two dates, newest first (the hosted product's form)",
      description: 'Paginate with `to` = the oldest timestamp already seen. Answered by any node from the store.',
      auth: requireInstance(deps.store, deps.auth),
      body: historyBody,
      responses: {
        200: '`{messages: [...], count, hasMore, chat_jid}` (`hasMore`: `count` messages came back)',
        400: "invalid 'from' date format. Use ISO 8601 format (e.g., '2026-02-16T18:32:39Z')",
      },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      const chatJid = chatAddress(b.number, 'number');
      const from = dateOf(b.from, 'from');
      const to = dateOf(b.to, 'to');
      const count = b.count ?? HISTORY_DEFAULT_LIMIT;
      const rows = await deps.store.messages.list(ctx.state.instance!.id, {
        chatJid,
        // `to` is inclusive: the cursor is exclusive, so one millisecond later.
        ...(to !== undefined ? { before: { timestamp: to + 1 } } : {}),
        limit: count,
      });
      const page = from === undefined ? rows : rows.filter((m) => m.timestamp >= from);
      ctx.body = {
        success: true,
        message: 'History retrieved successfully',
        messages: page.map((m) => ({
          ...messageView(m),
          messageId: m.id,
          ...(chatJid.endsWith('@g.us') ? { senderJid: m.senderJid } : {}),
        })),
        count: page.length,
        hasMore: page.length === count,
        chat_jid: chatJid,
      };
    },
  );

  return api;
}
