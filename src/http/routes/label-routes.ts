import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { UnavailableError, NOT_CONNECTED_MESSAGE, ValidationError } from '../../errors.js';
import type { ChatLabels } from '../../msgnet/msgnet-driver.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { nameRequired, toRecipient, unavailableWhenDisconnected } from '../route-helpers.js';
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
  const idempotent = idempotency(deps.actors);
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
      if (refresh && instance.connection.state !== 'connected') throw new UnavailableError(NOT_CONNECTED_MESSAGE);
      const chats = await unavailableWhenDisconnected(() =>
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

  return api;
}
