import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import type { ChatLabels } from '../../msgnet/msgnet-driver.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, disconnectedWhenNotConnected, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const assignBody = z.strictObject({
  number: z.string().trim().max(128).optional().describe('The chat: a phone number with country code (required)'),
  labelIds: z
    .array(z.string().trim().min(1).max(64))
    .min(1)
    .max(20)
    .optional()
    .describe('Labels to add or remove (required)'),
  action: z.enum(['add', 'remove']).optional().describe('Default: add'),
});

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

const byLabelQuery = z.object({
  labelIds: queryParam.text('Comma-separated label ids'),
  labelNames: queryParam.text('Comma-separated label names (case-insensitive)'),
  refresh: queryParam.flag('refresh', 'Ask the network rather than the labels recorded so far (needs a connection)'),
});

/**
 * The chats carrying any of the wanted labels, each with the labels that matched (a row per chat-label
 * pair). `wanted` undefined = no filter: every labelled chat with all its labels.
 */
export function chatsByLabel(chats: ChatLabels[], wanted: Set<string> | undefined) {
  const rows = chats
    .map((c) => ({
      chat_jid: c.chatJid,
      labels: c.labels.filter((l) => !wanted || wanted.has(l.id)).map((l) => ({ id: l.id, name: l.name })),
    }))
    .filter((c) => c.labels.length > 0);
  return { chats: rows, total_chats: rows.length, total_rows: rows.reduce((n, c) => n + c.labels.length, 0) };
}

/** Chats by label (spec 4.4) and the label list and assignment it refers to (`tags-list`, `tags-assign`). */
export function labelRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Labels', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  nameRequired(api, 'get', '/contactsByLabel', deps.auth);
  nameRequired(api, 'get', '/tags-list', deps.auth);
  nameRequired(api, 'post', '/tags-assign', deps.auth);

  api.route(
    {
      method: 'get',
      path: '/contactsByLabel/:instance',
      summary: 'Chats by label (all labelled chats without a filter)',
      auth: guard,
      query: byLabelQuery,
      responses: { 200: '`{chats: [{chat_jid, labels}], total_chats, total_rows, refreshed, filter_label_ids}`' },
    },
    async (ctx, { query }) => {
      const refresh = query.refresh ?? false;
      const ids = list(query.labelIds);
      const names = list(query.labelNames).map((n) => n.toLowerCase());
      const instance = ctx.state.instance!;
      // Refreshing asks the network: 503 when it cannot be reached (spec 7), before anything else.
      if (refresh) assertConnected(instance, 'disconnected');
      const chats = await disconnectedWhenNotConnected(() =>
        actors.for(ctx).call(instance.id, 'labels.chats', { refresh }),
      );
      let wanted: Set<string> | undefined;
      if (ids.length || names.length) {
        wanted = new Set(ids);
        if (names.length) {
          // Names resolve against every label the account has, case-insensitively.
          const labels = await actors.for(ctx).call(instance.id, 'labels.list', {});
          for (const l of labels) if (names.includes(l.name.toLowerCase())) wanted.add(l.id);
        }
      }
      ctx.body = {
        success: true,
        message: 'Chats retrieved successfully',
        ...chatsByLabel(chats, wanted),
        refreshed: refresh,
        filter_label_ids: wanted ? [...wanted] : [],
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/tags-list/:instance',
      summary: 'The labels, with how many chats carry each',
      auth: guard,
      responses: { 200: '`{labels: [{id, name, chatCount}], meta: {total}}`' },
    },
    async (ctx) => {
      const instanceId = ctx.state.instance!.id;
      const [labels, chats] = await Promise.all([
        actors.for(ctx).call(instanceId, 'labels.list', {}),
        actors.for(ctx).call(instanceId, 'labels.chats', { refresh: false }),
      ]);
      const counts = new Map<string, number>();
      for (const c of chats) for (const l of c.labels) counts.set(l.id, (counts.get(l.id) ?? 0) + 1);
      ctx.body = {
        success: true,
        message: 'Labels retrieved successfully',
        labels: labels.map((l) => ({ id: l.id, name: l.name, chatCount: counts.get(l.id) ?? 0 })),
        meta: { total: labels.length },
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/tags-assign/:instance',
      idempotency: idempotent,
      summary: "Add or remove a chat's labels",
      auth: guard,
      body: assignBody,
      responses: { 200: '`{chat_jid, labels: [{id, name}]}`' },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      if (!b.labelIds) throw new ValidationError('labelIds is required');
      const add = (b.action ?? 'add') === 'add';
      const chat = await actors.for(ctx).call(ctx.state.instance!.id, 'labels.assign', {
        chatJid: toRecipient(b.number),
        labelIds: b.labelIds,
        add,
      });
      ctx.body = {
        success: true,
        message: add ? 'Labels assigned successfully' : 'Labels removed successfully',
        chat_jid: chat.chatJid,
        labels: chat.labels.map((l) => ({ id: l.id, name: l.name })),
      };
    },
  );

  // The hosted product's label routes: `/tag` (list, create, delete) and `/assignTag` (assign, unassign).
  nameRequired(api, 'get', '/tag', deps.auth);
  nameRequired(api, 'post', '/tag', deps.auth);
  nameRequired(api, 'delete', '/tag', deps.auth);
  nameRequired(api, 'post', '/assignTag', deps.auth);
  nameRequired(api, 'delete', '/assignTag', deps.auth);
  const tagView = (l: { id: string; name: string }, color = 0) => ({
    id: l.id,
    name: l.name,
    color,
    type: 'CUSTOM',
    deleted: false,
  });
  /** The hosted product's 404 of an unknown label. */
  const tagNotFound = async <T>(work: () => Promise<T>): Promise<T> => {
    try {
      return await work();
    } catch (err) {
      if (err instanceof NotFoundError) throw new NotFoundError('Tag not found');
      throw err;
    }
  };

  api.route(
    {
      method: 'get',
      path: '/tag/:instance',
      summary: "The labels (the hosted product's path)",
      auth: guard,
      responses: { 200: '`{tags: [{id, name, color, type, deleted}], total}`' },
    },
    async (ctx) => {
      const labels = await actors.for(ctx).call(ctx.state.instance!.id, 'labels.list', {});
      ctx.body = {
        success: true,
        message: 'Tags retrieved successfully',
        tags: labels.map((l) => tagView(l)),
        total: labels.length,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/tag/:instance',
      summary: 'Create a label',
      auth: guard,
      body: z.strictObject({
        name: z.string().max(100).optional().describe('The label (required, trimmed)'),
        color: z.number().optional().describe('0 to 10 (default 0; out of range counts as 0)'),
      }),
      responses: { 200: '`{tag: {id, name, color, type, deleted}}`', 400: 'Tag name is required' },
    },
    async (ctx, { body: b }) => {
      const name = b.name?.trim();
      if (!name) throw new ValidationError('Tag name is required');
      const color = Number.isInteger(b.color) && b.color! >= 0 && b.color! <= 10 ? b.color! : 0;
      assertConnected(ctx.state.instance!, 'disconnected');
      const label = await actors.for(ctx).call(ctx.state.instance!.id, 'labels.create', { name, color });
      ctx.body = { success: true, message: 'Tag created successfully', tag: tagView(label, color) };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/tag/:instance',
      summary: 'Delete a label (it leaves every chat)',
      auth: guard,
      query: z.object({ tagId: queryParam.text('The label (required)') }),
      responses: {
        200: '`{tag: {id, name: "", color: 0, type: "", deleted: true}}`',
        400: 'tagId query parameter is required',
        404: 'Tag not found',
      },
    },
    async (ctx, { query }) => {
      if (!query.tagId) throw new ValidationError('tagId query parameter is required');
      assertConnected(ctx.state.instance!, 'disconnected');
      const labelId = query.tagId;
      await tagNotFound(() => actors.for(ctx).call(ctx.state.instance!.id, 'labels.delete', { labelId }));
      ctx.body = {
        success: true,
        message: 'Tag deleted successfully',
        tag: { id: labelId, name: '', color: 0, type: '', deleted: true },
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/assignTag/:instance',
      idempotency: idempotent,
      summary: "Put a label on a chat (the hosted product's path)",
      auth: guard,
      body: z.strictObject({
        number: z.string().trim().max(128).optional().describe('The chat (required)'),
        tagId: z
          .union([z.string().trim().max(64), z.number().int()])
          .optional()
          .describe('The label (required)'),
      }),
      responses: { 200: '`{tag_id}`', 400: 'tagId is required', 404: 'Tag not found' },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      if (b.tagId === undefined || b.tagId === '') throw new ValidationError('tagId is required');
      const tagId = String(b.tagId);
      const chatJid = toRecipient(b.number);
      await tagNotFound(() =>
        disconnectedWhenNotConnected(() =>
          actors.for(ctx).call(ctx.state.instance!.id, 'labels.assign', { chatJid, labelIds: [tagId], add: true }),
        ),
      );
      ctx.body = { success: true, message: 'Tag assigned successfully', tag_id: tagId };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/assignTag/:instance',
      summary: "Take a label off a chat (the hosted product's path; the label remains)",
      auth: guard,
      query: z.object({
        number: queryParam.text('The chat (required)'),
        tagId: queryParam.text('The label (required)'),
      }),
      responses: {
        200: '`{tag_id}`',
        400: '`number query parameter is required`, `tagId query parameter is required`',
        404: 'Tag not found',
      },
    },
    async (ctx, { query }) => {
      if (!query.number) throw new ValidationError('number query parameter is required');
      if (!query.tagId) throw new ValidationError('tagId query parameter is required');
      const tagId = query.tagId;
      const chatJid = toRecipient(query.number);
      await tagNotFound(() =>
        disconnectedWhenNotConnected(() =>
          actors.for(ctx).call(ctx.state.instance!.id, 'labels.assign', { chatJid, labelIds: [tagId], add: false }),
        ),
      );
      ctx.body = { success: true, message: 'Tag removed successfully', tag_id: tagId };
    },
  );

  return api;
}
