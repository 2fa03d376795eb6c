import { z } from 'zod';
import { NO_CHAT_STATE } from '../../actors/chat-calls.js';
import type { ChatState } from '../../actors/chat-calls.js';
import { NotFoundError, ValidationError } from '../../errors.js';
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
/** The longest timed presence in seconds (the hosted product's `duration`; more is cut to this). */
export const MAX_PRESENCE_SECONDS = 60;

/** The hosted product's presence states (any case) and ours, as the network's states. */
const PRESENCE_STATES: Record<string, 'composing' | 'recording' | 'paused' | 'available'> = {
  typing: 'composing',
  composing: 'composing',
  recording: 'recording',
  pause: 'paused',
  paused: 'paused',
  available: 'available',
};
/** The network's states under the hosted product's names (what its clients compare with). */
const HOSTED_STATE = { composing: 'typing', recording: 'recording', paused: 'pause', available: 'available' } as const;
const STATE_HINT = "Use 'typing', 'recording', or 'pause'";

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
    // The hosted product's names: `state` (typing, recording, pause or paused, any case), `duration` in seconds.
    state: z
      .string()
      .trim()
      .max(32)
      .optional()
      .describe("typing, recording or pause (the hosted product's name of 'presence'; any case)"),
    duration: z
      .number()
      .min(0)
      .optional()
      .describe(
        `typing or recording: shown this many seconds (more than ${MAX_PRESENCE_SECONDS} counts as ${MAX_PRESENCE_SECONDS}), then paused; ignored for pause`,
      ),
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
  markRead: z.strictObject({
    number,
    messageId: z.string().trim().max(128).optional().describe('The message to mark read (required)'),
    sender: z
      .string()
      .trim()
      .max(128)
      .optional()
      .describe("Its author's number or JID (groups, when the history does not hold the message)"),
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
    duration: z
      .string()
      .max(32)
      .optional()
      .describe(
        "The hosted product's form: '8h' or '8 hours', '1w', '7d' or '1 week', 'always', 'forever', 'permanent' or '' (no end); ignored with mute: false",
      ),
  }),
  block: z.strictObject({ number, block: z.boolean().optional().describe('true blocks, false unblocks (required)') }),
  clear: z.strictObject({ number }),
  deleteChat: z.strictObject({
    number,
    deleteMedia: z
      .boolean()
      .optional()
      .describe("Accepted; files already in the instance's bucket stay (delete them there)"),
  }),
  favorite: z.strictObject({
    number: number.describe('The chat (a chat favourite), or the chat of messageId when it is not in the history'),
    messageId: z.string().trim().max(128).optional().describe('A message to favourite (star); wins over number'),
    favorite: z.boolean().optional().describe('true (default) favourites, false removes it'),
  }),
  markChatRead: z.strictObject({
    number,
    read: z.boolean().optional().describe('true (default) marks the chat read; false marks it unread'),
  }),
  deleteMessage: z.strictObject({
    messageId: z.string().trim().max(128).optional().describe('The message (required)'),
    number: number.describe('Its chat, when the message is not in the history'),
    deleteForEveryone: z
      .boolean()
      .optional()
      .describe('true revokes it for everyone; false (default) deletes it on this device only'),
  }),
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
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors, store } = deps;
  for (const op of ['presence', 'read', 'markRead', 'archive', 'pin', 'mute', 'block', 'whatsappNumbers']) {
    nameRequired(api, 'post', `/${op}`, deps.auth);
  }
  for (const op of ['clear', 'deleteChat', 'delete']) nameRequired(api, 'delete', `/${op}`, deps.auth);
  nameRequired(api, 'post', '/markChatRead', deps.auth);
  nameRequired(api, 'post', '/favorite', deps.auth);
  for (const op of ['messages', 'list']) nameRequired(api, 'get', `/${op}`, deps.auth);

  /**
   * The chat of a body, checked, on a connected instance (the network does every chat operation). Not
   * connected is 503 on the chat routes, as the hosted product's chat pages answer it.
   */
  const chatOf = (ctx: RouteContext, raw: string | undefined) => {
    const jid = toRecipient(required(raw || undefined, 'Number'));
    assertConnected(ctx.state.instance!, 'disconnected');
    return jid;
  };
  /** The chat's state after an operation: ours (`chat` and the state) and the hosted product's `chat_jid`. */
  const answer = (
    ctx: RouteContext,
    message: string,
    chat: string,
    state: ChatState,
    extra: Record<string, unknown> = {},
  ) => {
    ctx.body = { success: true, message, chat, chat_jid: chat, ...stateView(state), ...extra };
  };
  /** How many contacts the instance has blocked, from the chat states its owner keeps. */
  const blockedCount = async (instanceId: string) => {
    let count = 0;
    for (const raw of (await store.ownedState.list(instanceId, CHATS_NAMESPACE)).values()) {
      if ((JSON.parse(raw) as Partial<ChatState>).blocked) count++;
    }
    return count;
  };

  api.route(
    {
      method: 'post',
      path: '/presence/:instance',
      summary: 'Show "typing…", "recording…", paused or online in a chat',
      auth: guard,
      body: bodies.presence,
      responses: { 200: '`{chat, chat_jid, presence, state, durationMs, duration}`' },
    },
    async (ctx, { body: b }) => {
      if (b.presence !== undefined && b.state !== undefined) {
        throw new ValidationError("Invalid request body: send 'presence' or 'state', not both");
      }
      if (b.durationMs !== undefined && b.duration !== undefined) {
        throw new ValidationError("Invalid request body: send 'durationMs' or 'duration', not both");
      }
      let presence: 'composing' | 'recording' | 'paused' | 'available';
      if (b.presence !== undefined) presence = b.presence;
      else if (b.state === undefined || b.state === '') throw new ValidationError(`State is required. ${STATE_HINT}`);
      else {
        const mapped = PRESENCE_STATES[b.state.toLowerCase()];
        if (!mapped) throw new ValidationError(`Invalid state. ${STATE_HINT}`);
        presence = mapped;
      }
      const timed = presence === 'composing' || presence === 'recording';
      if (b.durationMs !== undefined && !timed) {
        throw new ValidationError('Invalid request body: durationMs is for composing and recording only');
      }
      // The hosted `duration`: seconds, cut to 60, ignored for a pause (WhatsApp then ends "typing…" itself).
      const durationMs =
        b.durationMs ??
        (b.duration !== undefined && b.duration > 0 && timed
          ? Math.round(Math.min(b.duration, MAX_PRESENCE_SECONDS) * 1000)
          : undefined);
      const chat = chatOf(ctx, b.number);
      const instanceId = ctx.state.instance!.id;
      await actors.for(ctx).call(instanceId, 'msgnet.presence', { to: chat, state: presence });
      if (durationMs !== undefined) {
        // WhatsApp clears "typing…" by itself after a while: a pause lost with this node harms nobody.
        const log = ctx.state.log;
        setTimeout(() => {
          actors
            .for(ctx)
            .call(instanceId, 'msgnet.presence', { to: chat, state: 'paused' })
            .catch((err: unknown) => {
              log.debug({ err, chat }, 'could not end a timed chat presence');
            });
        }, durationMs).unref();
      }
      ctx.body = {
        success: true,
        message: 'Presence sent',
        chat,
        chat_jid: chat,
        presence,
        state: HOSTED_STATE[presence],
        durationMs: durationMs ?? null,
        duration: durationMs === undefined ? 0 : durationMs / 1000,
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

  api.route(
    {
      method: 'post',
      path: '/markRead/:instance',
      idempotency: idempotent,
      summary: "Mark one message read (the hosted product's route)",
      description: 'In a group, `sender` (the author) is needed unless the history holds the message.',
      auth: guard,
      body: bodies.markRead,
      responses: {
        200: '`{message_id, chat_jid}`',
        400: '`messageId is required`, `Number is required`, `sender is required for group messages`',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId) throw new ValidationError('messageId is required');
      const chat = chatOf(ctx, b.number);
      const sender = b.sender ? toRecipient(b.sender, 'sender') : undefined;
      const instanceId = ctx.state.instance!.id;
      if (chat.endsWith('@g.us') && sender === undefined) {
        const known = await store.messages.find(instanceId, b.messageId);
        if (!known || known.chatJid !== chat) throw new ValidationError('sender is required for group messages');
      }
      await actors.for(ctx).call(instanceId, 'chats.read', {
        chatJid: chat,
        messageIds: [b.messageId],
        ...(sender ? { sender } : {}),
      });
      ctx.body = {
        success: true,
        message: 'Message marked as read successfully',
        message_id: b.messageId,
        chat_jid: chat,
      };
    },
  );

  /** archive, pin and block: one boolean field, the network first, then the chat's state as it is after. */
  const toggle = (
    field: 'archive' | 'pin' | 'block',
    summary: string,
    [on, off]: [string, string],
    apply: (request: ActorCaller, instanceId: string, chat: string, value: boolean) => Promise<ChatState>,
    check: (chat: string) => void = () => undefined,
    extra: (instanceId: string, chat: string) => Promise<Record<string, unknown>> = async () => ({}),
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
        const instanceId = ctx.state.instance!.id;
        const state = await apply(actors.for(ctx), instanceId, chat, value);
        answer(ctx, value ? on : off, chat, state, await extra(instanceId, chat));
      },
    );

  toggle(
    'archive',
    'Archive or unarchive a chat',
    ['Chat archived successfully', 'Chat unarchived successfully'],
    (request, id, chatJid, archive) => request.call(id, 'chats.archive', { chatJid, archive }),
  );
  toggle(
    'pin',
    'Pin or unpin a chat',
    ['Chat pinned successfully', 'Chat unpinned successfully'],
    (request, id, chatJid, pin) => request.call(id, 'chats.pin', { chatJid, pin }),
  );
  toggle(
    'block',
    'Block or unblock a contact',
    ['Contact blocked successfully', 'Contact unblocked successfully'],
    (request, id, jid, block) => request.call(id, 'chats.block', { jid, block }),
    (chat) => {
      if (chat.endsWith('@g.us')) {
        throw new ValidationError('Invalid request body: groups cannot be blocked; leave them');
      }
    },
    async (instanceId, chat) => ({ contact_jid: chat, blocked_count: await blockedCount(instanceId) }),
  );

  api.route(
    {
      method: 'post',
      path: '/mute/:instance',
      idempotency: idempotent,
      summary: 'Mute a chat for a while or always, or unmute it',
      auth: guard,
      body: bodies.mute,
      responses: {
        200: "`{chat, chat_jid, archived, pinned, muted, mutedUntil (RFC 3339 or 'always'), blocked, duration (seconds; 0: always or unmuted)}`",
        400: 'Invalid duration: <value>',
      },
    },
    async (ctx, { body: b }) => {
      const mute = required(b.mute, 'mute');
      if (!mute && b.durationSeconds !== undefined) {
        throw new ValidationError('Invalid request body: durationSeconds is for mute: true only');
      }
      if (b.durationSeconds !== undefined && b.duration !== undefined) {
        throw new ValidationError("Invalid request body: send 'durationSeconds' or 'duration', not both");
      }
      // The hosted `duration` is ignored when unmuting, as there.
      const seconds = b.durationSeconds ?? (mute && b.duration !== undefined ? muteSeconds(b.duration) : 0);
      const chat = chatOf(ctx, b.number);
      const until = !mute ? null : seconds ? Date.now() + seconds * 1000 : MUTED_ALWAYS;
      const state = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.mute', { chatJid: chat, until });
      answer(ctx, muteMessage(mute, seconds), chat, state, { duration: mute ? seconds : 0 });
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
      method: 'delete',
      path: '/deleteChat/:instance',
      idempotency: idempotent,
      summary: "Delete a chat on this device (the hosted product's path; others keep their history)",
      auth: guard,
      body: bodies.deleteChat,
      responses: { 200: '`{chat_jid, delete_media, deletedMessages}`' },
    },
    async (ctx, { body: b }) => {
      const chat = chatOf(ctx, b.number);
      const { deletedMessages } = await actors.for(ctx).call(ctx.state.instance!.id, 'chats.clear', { chatJid: chat });
      const deleteMedia = b.deleteMedia ?? false;
      ctx.body = {
        success: true,
        message: deleteMedia ? 'Chat deleted successfully (including media)' : 'Chat deleted successfully',
        chat_jid: chat,
        delete_media: deleteMedia,
        deletedMessages,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/favorite/:instance',
      idempotency: idempotent,
      summary: "Favourite (star) a message, or remove it (the hosted product's route)",
      description: 'No driver favourites a whole chat: a body with `number` and no `messageId` is refused.',
      auth: guard,
      body: bodies.favorite,
      responses: {
        200: '`{type: "message", chat_jid, message_id, favorite}`',
        400: 'Either number or messageId is required',
        404: 'Message not found',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId && !b.number) throw new ValidationError('Either number or messageId is required');
      if (!b.messageId) {
        throw new ValidationError(
          'Favoriting a whole chat is not supported by this service; favorite a message with messageId',
        );
      }
      const instance = ctx.state.instance!;
      const known = await store.messages.find(instance.id, b.messageId);
      const chat = known?.chatJid ?? (b.number ? toRecipient(b.number) : undefined);
      if (!chat) throw new NotFoundError('Message not found');
      assertConnected(instance, 'disconnected');
      const favorite = b.favorite ?? true;
      await actors.for(ctx).call(instance.id, 'chats.star', {
        chatJid: chat,
        messageId: b.messageId,
        fromMe: known?.fromMe ?? false,
        star: favorite,
      });
      ctx.body = {
        success: true,
        message: favorite ? 'Message added to favorites successfully' : 'Message removed from favorites successfully',
        type: 'message',
        chat_jid: chat,
        message_id: b.messageId,
        favorite,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/markChatRead/:instance',
      idempotency: idempotent,
      summary: "Mark a chat read, or unread with read: false (the hosted product's route)",
      auth: guard,
      body: bodies.markChatRead,
      responses: { 200: '`{chat_jid, read, messageIds}`' },
    },
    async (ctx, { body: b }) => {
      const chat = chatOf(ctx, b.number);
      const read = b.read ?? true;
      const instanceId = ctx.state.instance!.id;
      const messageIds = read
        ? (await actors.for(ctx).call(instanceId, 'chats.read', { chatJid: chat })).messageIds
        : (await actors.for(ctx).call(instanceId, 'chats.markUnread', { chatJid: chat }), []);
      ctx.body = {
        success: true,
        message: read ? 'Chat marked as read successfully' : 'Chat marked as unread successfully',
        chat_jid: chat,
        read,
        messageIds,
      };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/delete/:instance',
      idempotency: idempotent,
      summary: "Delete a message: for everyone (revoke) or on this device only (the hosted product's route)",
      auth: guard,
      body: bodies.deleteMessage,
      responses: {
        200: '`{messageId, chat_jid, delete_type: revoke | delete_for_me}`',
        400: 'MessageID is required',
        404: 'message not found',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId) throw new ValidationError('MessageID is required');
      const instance = ctx.state.instance!;
      const known = await store.messages.find(instance.id, b.messageId);
      const chatJid = known?.chatJid ?? (b.number ? toRecipient(b.number) : undefined);
      if (!chatJid) throw new NotFoundError('message not found');
      assertConnected(instance, 'disconnected');
      const everyone = b.deleteForEveryone ?? false;
      if (everyone) {
        await actors.for(ctx).call(instance.id, 'msgnet.deleteMessage', {
          chatJid,
          messageId: b.messageId,
          fromMe: known?.fromMe ?? true,
        });
      } else {
        await actors.for(ctx).call(instance.id, 'chats.deleteForMe', {
          chatJid,
          messageId: b.messageId,
          fromMe: known?.fromMe ?? true,
          ...(known && !known.fromMe && chatJid.endsWith('@g.us') ? { participant: known.senderJid } : {}),
          timestamp: known?.timestamp ?? Date.now(),
        });
      }
      ctx.body = {
        success: true,
        message: everyone ? 'Message deleted for everyone successfully' : 'Message deleted for me successfully',
        messageId: b.messageId,
        chat_jid: chatJid,
        delete_type: everyone ? 'revoke' : 'delete_for_me',
      };
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
      assertConnected(ctx.state.instance!, 'disconnected');
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

const MUTE_UNITS: Record<string, number> = {
  m: 60,
  min: 60,
  minute: 60,
  minutes: 60,
  h: 3600,
  hour: 3600,
  hours: 3600,
  d: 86_400,
  day: 86_400,
  days: 86_400,
  w: 604_800,
  week: 604_800,
  weeks: 604_800,
};

/**
 * The hosted product's mute `duration` in seconds: `8h`, `8 hours`, `1w`, `7d`, `1 week`…; `always`,
 * `forever`, `permanent` or empty → 0 (no end). Anything else → 400 `Invalid duration: <value>`.
 */
export function muteSeconds(raw: string): number {
  const value = raw.trim().toLowerCase();
  if (value === '' || value === 'always' || value === 'forever' || value === 'permanent') return 0;
  const match = /^(\d{1,6})\s*([a-z]+)$/.exec(value);
  const unit = match ? MUTE_UNITS[match[2]!] : undefined;
  const seconds = match && unit ? Number(match[1]) * unit : 0;
  if (seconds <= 0 || seconds > 366 * 86_400) throw new ValidationError(`Invalid duration: ${raw}`);
  return seconds;
}

/** The hosted product's messages: `Chat muted permanently`, `Chat muted for 8 hours`, `Chat muted for 1 week`… */
function muteMessage(mute: boolean, seconds: number): string {
  if (!mute) return 'Chat notifications unmuted successfully';
  if (seconds === 0) return 'Chat muted permanently';
  const [size, unit] =
    seconds % 604_800 === 0
      ? [seconds / 604_800, 'week']
      : seconds % 86_400 === 0
        ? [seconds / 86_400, 'day']
        : seconds % 3600 === 0
          ? [seconds / 3600, 'hour']
          : seconds % 60 === 0
            ? [seconds / 60, 'minute']
            : [seconds, 'second'];
  return `Chat muted for ${size} ${unit}${size === 1 ? '' : 's'}`;
}
