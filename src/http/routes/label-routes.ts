import Router from '@koa/router';
import { z } from 'zod';
import { UnavailableError, NOT_CONNECTED_MESSAGE, ValidationError } from '../../errors.js';
import type { ChatLabels } from '../../msgnet/msgnet-driver.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import { jsonBody } from '../json-body.js';
import { nameRequired, parseBody, queryFlag, queryString, toRecipient, unavailableWhenDisconnected } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const assignBody = z.strictObject({
  number: z.string().trim().max(128).optional(),
  labelIds: z.array(z.string().trim().min(1).max(64)).min(1).max(20).optional(),
  action: z.enum(['add', 'remove']).optional(),
});

const list = (raw: string | undefined) =>
  (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/**
 * The chats carrying any of the wanted labels, each with the labels that matched (a row per chat-label
 * pair). `wanted` undefined = no filter: every labelled chat with all its labels.
 */
export function chatsByLabel(chats: ChatLabels[], wanted: Set<string> | undefined) {
  const rows = chats
    .map((c) => ({ chat_jid: c.chatJid, labels: c.labels.filter((l) => !wanted || wanted.has(l.id)).map((l) => ({ id: l.id, name: l.name })) }))
    .filter((c) => c.labels.length > 0);
  return { chats: rows, total_chats: rows.length, total_rows: rows.reduce((n, c) => n + c.labels.length, 0) };
}

/** Chats by label (spec 4.4) and the label list and assignment it refers to (`tags-list`, `tags-assign`). */
export function labelRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/chat' });
  const guard = requireInstance(deps.store, deps.auth);
  const call = deps.runtime.router;
  nameRequired(router, 'get', '/contactsByLabel', deps.auth);
  nameRequired(router, 'get', '/tags-list', deps.auth);
  nameRequired(router, 'post', '/tags-assign', deps.auth);

  router.get('/contactsByLabel/:instance', guard, async (ctx) => {
    const refresh = queryFlag(ctx, 'refresh', false);
    const ids = list(queryString(ctx, 'labelIds'));
    const names = list(queryString(ctx, 'labelNames')).map((n) => n.toLowerCase());
    const instance = ctx.state.instance!;
    // Refreshing asks the network: 503 when it cannot be reached (spec 7), before anything else.
    if (refresh && instance.connection.state !== 'connected') throw new UnavailableError(NOT_CONNECTED_MESSAGE);
    const chats = await unavailableWhenDisconnected(() => call.call(instance.id, 'labels.chats', { refresh }, deps.callTimeoutMs));
    let wanted: Set<string> | undefined;
    if (ids.length || names.length) {
      wanted = new Set(ids);
      if (names.length) {
        // Names resolve against every label the account has, case-insensitively.
        const labels = await call.call(instance.id, 'labels.list', {}, deps.callTimeoutMs);
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
  });

  router.get('/tags-list/:instance', guard, async (ctx) => {
    const instanceId = ctx.state.instance!.id;
    const [labels, chats] = await Promise.all([
      call.call(instanceId, 'labels.list', {}, deps.callTimeoutMs),
      call.call(instanceId, 'labels.chats', { refresh: false }, deps.callTimeoutMs),
    ]);
    const counts = new Map<string, number>();
    for (const c of chats) for (const l of c.labels) counts.set(l.id, (counts.get(l.id) ?? 0) + 1);
    ctx.body = {
      success: true,
      message: 'Labels retrieved successfully',
      labels: labels.map((l) => ({ id: l.id, name: l.name, chatCount: counts.get(l.id) ?? 0 })),
      meta: { total: labels.length },
    };
  });

  router.post('/tags-assign/:instance', guard, jsonBody(deps.maxBodyBytes), async (ctx) => {
    const b = parseBody(ctx, assignBody);
    if (!b.number) throw new ValidationError('Number is required');
    if (!b.labelIds) throw new ValidationError('labelIds is required');
    const add = (b.action ?? 'add') === 'add';
    const chat = await call.call(ctx.state.instance!.id, 'labels.assign', { chatJid: toRecipient(b.number), labelIds: b.labelIds, add }, deps.callTimeoutMs);
    ctx.body = {
      success: true,
      message: add ? 'Labels assigned successfully' : 'Labels removed successfully',
      chat_jid: chat.chatJid,
      labels: chat.labels.map((l) => ({ id: l.id, name: l.name })),
    };
  });

  return router;
}
