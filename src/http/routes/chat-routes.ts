import { z } from 'zod';
import { NO_CHAT_STATE } from '../../actors/chat-calls.js';
import type { ChatState } from '../../actors/chat-calls.js';
import { ValidationError } from '../../errors.js';
import { CHATS_NAMESPACE } from '../../store/namespaces.js';
import type { ChatCursor } from '../../store/records.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { cursorOf, historyQuery, messageView } from './history-routes.js';
import { MAX_DELAY_MS } from './message-send.js';

type Deps = ActorRouteDeps;

export const CHAT_LIST_DEFAULT_LIMIT = 50;
export const CHAT_LIST_MAX_LIMIT = 200;
export const MAX_NUMBER_CHECKS = 50;
/** WhatsApp's "always" mute. */
export const MUTED_ALWAYS = -1;

const number = z
  .string()
  .trim()
  .max(128)
  .optional()
  .describe('The chat: a phone number with country code or a JID (required)');

const bodies = {
  presence: z.strictObject({
    number,
    presence: z
      .enum(['composing', 'recording', 'paused', 'available'])
      .optional()
      .describe('composing ("typing…"), recording, paused or available (required)'),
    durationMs: z
      .number()
      .int()
      .min(1)
      .max(MAX_DELAY_MS)
      .optional()
      .describe(`composing or recording: shown this long (up to ${MAX_DELAY_MS} ms), then paused`),
  }),
  read: z.strictObject({
    number,
    messageIds: z
      .array(z.string().trim().min(1).max(128))
      .min(1)
      .max(1000)
      .optional()
      .describe('Only these messages; default: every received message not read yet'),
  }),
  archive: z.strictObject({
    number,
    archive: z.boolean().optional().describe('true archives, false unarchives (required)'),
  }),
  pin: z.strictObject({ number, pin: z.boolean().optional().describe('true pins, false unpins (required)') }),
  mute: z.strictObject({
    number,
    mute: z.boolean().optional().describe('true mutes, false unmutes (required)'),
    durationSeconds: z
      .number()
      .int()
      .min(1)
      .max(366 * 24 * 3600)
      .optional()
      .describe('How long (default: always)'),
  }),
  block: z.strictObject({ number, block: z.boolean().optional().describe('true blocks, false unblocks (required)') }),
  clear: z.strictObject({ number }),
  numbers: z.strictObject({
    numbers: z
      .array(z.string().trim().min(1).max(128))
      .optional()
      .describe(`1 to ${MAX_NUMBER_CHECKS} phone numbers with country code (required)`),
  }),
};

const listQuery = z.object({
  limit: queryParam
    .text(`Chats per page, 1 to ${CHAT_LIST_MAX_LIMIT}; default ${CHAT_LIST_DEFAULT_LIMIT}`)
    .transform((raw, ctx) => {
      if (raw === undefined) return CHAT_LIST_DEFAULT_LIMIT;
      const n = Number(raw);
      if (Number.isInteger(n) && n >= 1 && n <= CHAT_LIST_MAX_LIMIT) return n;
      ctx.addIssue({ code: 'custom', message: `limit must be an integer from 1 to ${CHAT_LIST_MAX_LIMIT}` });
      return z.NEVER;
    }),
  cursor: queryParam.text('meta.nextCursor of the previous page'),
});

const encodeCursor = (c: ChatCursor) => Buffer.from(`${c.lastMessageAt}|${c.chatJid}`).toString('base64url');

function decodeCursor(raw: string | undefined): ChatCursor | undefined {
  if (raw === undefined) return undefined;
  const [at, chatJid] = Buffer.from(raw, 'base64url').toString().split('|');
  if (!at || !chatJid || !/^\d{1,15}$/.test(at)) throw new ValidationError('cursor is not one this API gave');
  return { lastMessageAt: Number(at), chatJid };
}

const mutedView = (until: number | null) =>
  until === null ? null : until === MUTED_ALWAYS ? 'always' : new Date(until).toISOString();

function stateView(s: ChatState) {
  const muted = s.mutedUntil === MUTED_ALWAYS || (s.mutedUntil !== null && s.mutedUntil > Date.now());
  return {
    archived: s.archived,
    pinned: s.pinned,
    muted,
    mutedUntil: muted ? mutedView(s.mutedUntil) : null,
    blocked: s.blocked,
  };
}

function required<T>(value: T | undefined, field: string): T {
  if (value === undefined) throw new ValidationError(`${field} is required`);
  return value;
}

/**
 * Chat operations (`/api/chat/<op>/:instance`): presence, read, archive, pin, mute, block, clear, which
 * numbers have an account, one chat's messages and the chat list.
 */
export function chatRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Chats', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors, store } = deps;
  for (const op of ['presence', 'read', 'archive', 'pin', 'mute', 'block', 'whatsappNumbers']) {
    nameRequired(api, 'post', `/${op}`, deps.auth);
  }
  nameRequired(api, 'delete', '/clear', deps.auth);
  for (const op of ['messages', 'list']) nameRequired(api, 'get', `/${op}`, deps.auth);

  /** The chat of a body, checked, on a connected instance (the network does every chat operation). */
  const chatOf = (ctx: RouteContext, raw: string | undefined) => {
    const jid = toRecipient(required(raw || undefined, 'Number'));
    assertConnected(ctx.state.instance!);
    return jid;
  };
  const answer = (ctx: RouteContext, message: string, chat: string, state: ChatState) => {
    ctx.body = { success: true, message, chat, ...stateView(state) };
  };

  api.route(
    {
      method: 'post',
      path: '/presence/:instance',
      summary: 'Show "typing…", "recording…", paused or online in a chat',
      auth: guard,
      body: bodies.presence,
      responses: { 200: '`{chat, presence, durationMs}`' },
    },
    async (ctx, { body: b }) => {
      const presence = required(b.presence, 'presence');
      if (b.durationMs !== undefined && presence !== 'composing' && presence !== 'recording') {
        throw new ValidationError('Invalid request body: durationMs is for composing and recording only');
      }
      const chat = chatOf(ctx, b.number);
      const instanceId = ctx.state.instance!.id;
      await actors.for(ctx).call(instanceId, 'msgnet.presence', { to: chat, state: presence });
      if (b.durationMs !== undefined) {
        // WhatsApp clears "typing…" by itself after a while: a pause lost with this node harms nobody.
        const log = ctx.state.log;
        setTimeout(() => {
          actors
            .for(ctx)
            .call(instanceId, 'msgnet.presence', { to: chat, state: 'paused' })
            .catch((err: unknown) => {
              log.debug({ err, chat }, 'could not end a timed chat presence');
            });
        }, b.durationMs).unref();
      }
      ctx.body = {
        success: true,
        message: 'Presence sent',
        chat,
        presence,
        durationMs: b.durationMs ?? null,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/read/:instance',
      idempotency: idempotent,
      summary: 'Mark a chat (or some of its messages) read',
      auth: guard,
      body: bodies.read,
      responses: { 200: '`{chat, messageIds}`: the messages marked read' },
    },
    async (ctx, { body: b }) => {
      const chat = chatOf(ctx, b.number);
      const { messageIds } = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.read', {
        chatJid: chat,
        ...(b.messageIds ? { messageIds: b.messageIds } : {}),
      });
      ctx.body = { success: true, message: 'Chat marked as read', chat, messageIds };
    },
  );

  /** archive, pin and block: one boolean field, the network first, then the chat's state as it is after. */
  const toggle = (
    field: 'archive' | 'pin' | 'block',
    summary: string,
    [on, off]: [string, string],
    apply: (request: ActorCaller, instanceId: string, chat: string, value: boolean) => Promise<ChatState>,
    check: (chat: string) => void = () => undefined,
  ) =>
    api.route(
      {
        method: 'post',
        path: `/${field}/:instance`,
        idempotency: idempotent,
        summary,
        auth: guard,
        body: bodies[field],
        responses: { 200: "`{chat, archived, pinned, muted, mutedUntil, blocked}`: the chat's state after" },
      },
      async (ctx, { body: b }) => {
        const value = required((b as Partial<Record<typeof field, boolean>>)[field], field);
        const chat = chatOf(ctx, b.number);
        check(chat);
        answer(ctx, value ? on : off, chat, await apply(actors.for(ctx), ctx.state.instance!.id, chat, value));
      },
    );

  toggle(
    'archive',
    'Archive or unarchive a chat',
    ['Chat archived', 'Chat unarchived'],
    (request, id, chatJid, archive) => request.call(id, 'chats.archive', { chatJid, archive }),
  );
  toggle('pin', 'Pin or unpin a chat', ['Chat pinned', 'Chat unpinned'], (request, id, chatJid, pin) =>
    request.call(id, 'chats.pin', { chatJid, pin }),
  );
  toggle(
    'block',
    'Block or unblock a contact',
    ['Contact blocked', 'Contact unblocked'],
    (request, id, jid, block) => request.call(id, 'chats.block', { jid, block }),
    (chat) => {
      if (chat.endsWith('@g.us')) {
        throw new ValidationError('Invalid request body: groups cannot be blocked; leave them');
      }
    },
  );

  api.route(
    {
      method: 'post',
      path: '/mute/:instance',
      idempotency: idempotent,
      summary: 'Mute a chat for a while or always, or unmute it',
      auth: guard,
      body: bodies.mute,
      responses: { 200: "`{chat, archived, pinned, muted, mutedUntil (RFC 3339 or 'always'), blocked}`" },
    },
    async (ctx, { body: b }) => {
      const mute = required(b.mute, 'mute');
      if (!mute && b.durationSeconds !== undefined) {
        throw new ValidationError('Invalid request body: durationSeconds is for mute: true only');
      }
      const chat = chatOf(ctx, b.number);
      const until = !mute ? null : b.durationSeconds ? Date.now() + b.durationSeconds * 1000 : MUTED_ALWAYS;
      const state = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.mute', { chatJid: chat, until });
      answer(ctx, mute ? 'Chat muted' : 'Chat unmuted', chat, state);
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/clear/:instance',
      idempotency: idempotent,
      summary: "Clear a chat on this device (and its messages from the instance's history)",
      auth: guard,
      body: bodies.clear,
      responses: { 200: '`{chat, deletedMessages}`' },
    },
    async (ctx, { body: b }) => {
      const chat = chatOf(ctx, b.number);
      const { deletedMessages } = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.clear', { chatJid: chat });
      ctx.body = { success: true, message: 'Chat cleared', chat, deletedMessages };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/whatsappNumbers/:instance',
      summary: 'Which numbers have a WhatsApp account',
      auth: guard,
      body: bodies.numbers,
      responses: { 200: '`{numbers: [{number, exists, jid}]}` in the order asked' },
    },
    async (ctx, { body: b }) => {
      const numbers = required(b.numbers, 'numbers');
      if (numbers.length < 1 || numbers.length > MAX_NUMBER_CHECKS) {
        throw new ValidationError(`Invalid request body: numbers takes 1 to ${MAX_NUMBER_CHECKS} items`);
      }
      numbers.forEach((n, i) => toRecipient(n, `numbers[${i}]`));
      assertConnected(ctx.state.instance!);
      const checked = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.check', { numbers });
      ctx.body = {
        success: true,
        message: `${checked.filter((c) => c.exists).length} of ${checked.length} on WhatsApp`,
        numbers: checked,
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/messages/:instance',
      summary: "One chat's messages, newest first",
      description: "The instance's history of the chat (as GET /api/chat/history?chat=), answered by any node.",
      auth: guard,
      query: historyQuery.omit({ chat: true }).extend({
        number: queryParam.text('The chat: a phone number with country code or a JID (required)'),
      }),
      responses: { 200: '`{messages: [...], meta: {count, hasMore, nextBefore}}`' },
    },
    async (ctx, { query }) => {
      const chatJid = toRecipient(required(query.number, 'number'));
      const instanceId = ctx.state.instance!.id;
      const before = await cursorOf(store, instanceId, query.before);
      const rows = await store.messages.list(instanceId, {
        chatJid,
        ...(before ? { before } : {}),
        limit: query.limit + 1,
      });
      const page = rows.slice(0, query.limit);
      const hasMore = rows.length > query.limit;
      ctx.body = {
        success: true,
        message: 'Messages retrieved successfully',
        messages: page.map(messageView),
        meta: { count: page.length, hasMore, nextBefore: hasMore ? page[page.length - 1]!.id : null },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/list/:instance',
      summary: 'The chats, most recently active first',
      description:
        'Every chat of the history with its newest message time, unread count, state and labels; answered by any node.',
      auth: guard,
      query: listQuery,
      responses: {
        200: '`{chats: [{jid, isGroup, lastMessageAt, unread, archived, pinned, muted, mutedUntil, blocked, labels}], meta: {count, hasMore, nextCursor}}`',
      },
    },
    async (ctx, { query }) => {
      const instanceId = ctx.state.instance!.id;
      const before = decodeCursor(query.cursor);
      const rows = await store.messages.chats(instanceId, { ...(before ? { before } : {}), limit: query.limit + 1 });
      const page = rows.slice(0, query.limit);
      const hasMore = rows.length > query.limit;
      const states = await store.ownedState.getMany(
        instanceId,
        CHATS_NAMESPACE,
        page.map((c) => c.chatJid),
      );
      const labels = await labelsByChat(ctx, page.length > 0);
      ctx.body = {
        success: true,
        message: 'Chats retrieved successfully',
        chats: page.map((c) => {
          const raw = states.get(c.chatJid);
          const state = raw ? { ...NO_CHAT_STATE, ...(JSON.parse(raw) as Partial<ChatState>) } : NO_CHAT_STATE;
          return {
            jid: c.chatJid,
            isGroup: c.chatJid.endsWith('@g.us'),
            lastMessageAt: new Date(c.lastMessageAt).toISOString(),
            unread: c.unread,
            ...stateView(state),
            labels: labels.get(c.chatJid) ?? [],
          };
        }),
        meta: { count: page.length, hasMore, nextCursor: hasMore ? encodeCursor(page[page.length - 1]!) : null },
      };
    },
  );

  /** The labels the instance keeps per chat (no network call); none when the page is empty. */
  const labelsByChat = async (ctx: RouteContext, wanted: boolean) => {
    if (!wanted) return new Map<string, { id: string; name: string }[]>();
    const chats = await actors.for(ctx).call(ctx.state.instance!.id, 'labels.chats', { refresh: false });
    return new Map(chats.map((c) => [c.chatJid, c.labels]));
  };

  return api;
}
