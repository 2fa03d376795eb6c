import { z } from 'zod';
import { UnavailableError, ValidationError, MODULE_UNAVAILABLE } from '../../errors.js';
import { createSchema, parseCreateBody, parsePatchBody, patchSchema } from '../../integrations/chatbot/bot-schema.js';
import type { SessionAction } from '../../integrations/chatbot/chatbot-calls.js';
import { botView } from '../../integrations/chatbot/chatbot-service.js';
import type { ChatbotService } from '../../integrations/chatbot/chatbot-service.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteHandler } from '../api-router.js';
import { requireAccountOrInstance, requireInstance } from '../auth.js';
import type { Guard } from '../auth.js';
import { nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

export interface ChatbotRouteDeps extends ActorRouteDeps {
  /** Undefined when CHATBOT_ENABLED is off: every chatbot endpoint answers 503. */
  chatbot: ChatbotService | undefined;
}

/** Spec 8: the re-sync after a bot removal. */
export const RESYNC_TIMEOUT_MS = 60_000;
const PREFIXES = ['/api/chatbot', '/api/typebot'] as const;
const ACTIONS: readonly SessionAction[] = ['pause', 'resume', 'close'];
const ACTION_DONE: Record<SessionAction, string> = {
  pause: 'Session paused',
  resume: 'Session resumed',
  close: 'Session closed',
};

const startBody = z.strictObject({
  number: z.string().trim().max(128).optional(),
  botId: z.string().trim().max(64).optional(),
  variables: z.record(z.string().max(128), z.union([z.string().max(4096), z.number(), z.boolean()])).optional(),
});
const sessionBody = z.strictObject({
  number: z.string().trim().max(128).optional(),
  action: z.string().trim().optional(),
  botId: z.string().trim().max(64).optional(),
});

const botIdQuery = z.object({ botId: queryParam.text('One bot (its UUID)') });
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * The chatbot integration (spec 4.8), also under `/api/typebot/*`. Bot creation and update run in the
 * instance's actor (serialised per instance); reads come from the store on any node; removal deletes the
 * rows here, then asks the owner to re-sync (best effort, 60 s).
 */
export function chatbotRoutes(deps: ChatbotRouteDeps): ApiRouter[] {
  const { actors } = deps;
  const token = requireAccountOrInstance(deps.auth);
  const instanceGuard = requireInstance(deps.store, deps.auth);
  // The token is checked first (401/403), then the module (503), then the instance (404).
  const guard: Guard = Object.assign(
    async (ctx: Parameters<Guard>[0], next: Parameters<Guard>[1]) =>
      token(ctx, async () => {
        if (!deps.chatbot) throw new UnavailableError(MODULE_UNAVAILABLE);
        await instanceGuard(ctx, next);
      }),
    { access: instanceGuard.access },
  );
  const service = () => deps.chatbot!;
  const unavailable = { 503: '`integration gateway not configured` (CHATBOT_ENABLED is off)' };

  const setBot: RouteHandler<undefined, undefined> = async (ctx, { body }) => {
    const patch = parseCreateBody(body);
    const bot = await actors.for(ctx).call(ctx.state.instance!.id, 'chatbot.createBot', { patch });
    ctx.status = 201;
    ctx.body = { success: true, message: 'Chatbot bot created', bot: botView(bot) };
  };

  return PREFIXES.map((prefix) => {
    const api = new ApiRouter({ prefix, tag: 'Chatbot', maxBodyBytes: deps.maxBodyBytes });
    for (const action of ['/set', '/start']) nameRequired(api, 'post', action, deps.auth);
    for (const action of ['/list', '/sessions']) nameRequired(api, 'get', action, deps.auth);

    api.route(
      {
        method: 'post',
        path: '/set/:instance',
        summary: 'Create a bot (url and triggerType required)',
        auth: guard,
        rawBody: createSchema,
        responses: { 201: '`{bot}`', 400: 'An invalid or clashing bot', ...unavailable },
      },
      setBot,
    );

    api.route(
      {
        method: 'patch',
        path: '/update/:instance',
        summary: 'Change fields of a bot, found by `botId` (body or query)',
        auth: guard,
        rawBody: patchSchema,
        query: botIdQuery,
        responses: { 200: '`{bot}`', 404: '`Bot not found`', ...unavailable },
      },
      async (ctx, { body, query }) => {
        const { botId, patch } = parsePatchBody(body, query.botId);
        const bot = await actors.for(ctx).call(ctx.state.instance!.id, 'chatbot.updateBot', { botId, patch });
        ctx.body = { success: true, message: 'Chatbot bot updated', bot: botView(bot) };
      },
    );

    api.route(
      {
        method: 'get',
        path: '/list/:instance',
        summary: "The instance's bots (or one), with active_sessions, last_activity_at and the integration's status",
        auth: guard,
        query: botIdQuery,
        responses: {
          200: '`{integration: {status, last_error, fallback_bot_id}, bots}`',
          404: '`Chatbot integration not found`',
          ...unavailable,
        },
      },
      async (ctx, { query }) => {
        const { integration, bots } = await service().list(ctx.state.instance!.id, query.botId);
        ctx.body = { success: true, message: `${plural(bots.length, 'bot')} found`, integration, bots };
      },
    );

    api.route(
      {
        method: 'delete',
        path: '/delete/:instance',
        summary: 'Remove one bot, or all of them (the integration is then deactivated); idempotent',
        auth: guard,
        query: botIdQuery,
        responses: { 200: '`{deleted, remaining, integration: active|deactivated}`', ...unavailable },
      },
      async (ctx, { query }) => {
        const instance = ctx.state.instance!;
        const botId = query.botId;
        const { deleted, remaining } = await service().removeBots(instance.id, botId);
        // The removal stands whatever the owner answers (spec 3): a failed re-sync is only logged.
        await actors
          .for(ctx)
          .callIfOwned(instance.id, 'chatbot.sync', {}, RESYNC_TIMEOUT_MS)
          .catch((err: unknown) => {
            ctx.state.log.warn({ err, instance: instance.name }, 'chatbot bots removed; the re-sync failed');
          });
        ctx.body = {
          success: true,
          message: botId === undefined ? 'Chatbot bots deleted' : 'Chatbot bot deleted',
          deleted,
          remaining,
          integration: remaining > 0 ? 'active' : 'deactivated',
        };
      },
    );

    api.route(
      {
        method: 'post',
        path: '/start/:instance',
        summary: 'Start a flow for a number (its current session is closed)',
        auth: guard,
        body: startBody,
        responses: {
          200: '`{session}`',
          400: '`Number is required`',
          404: '`Chatbot integration not found`, `Bot not found`',
          ...unavailable,
        },
      },
      async (ctx, { body: b }) => {
        if (!b.number) throw new ValidationError('Number is required');
        const chatJid = toRecipient(b.number);
        const instanceId = ctx.state.instance!.id;
        await service().requireBots(instanceId, b.botId);
        const variables = Object.fromEntries(Object.entries(b.variables ?? {}).map(([k, v]) => [k, String(v)]));
        const session = await actors.for(ctx).call(instanceId, 'chatbot.start', {
          chatJid,
          ...(b.botId ? { botId: b.botId } : {}),
          variables,
        });
        ctx.body = { success: true, message: 'Chatbot flow started', session };
      },
    );

    api.route(
      {
        method: 'get',
        path: '/sessions/:instance',
        summary: 'Live sessions (opened, paused, held), of every bot or one',
        auth: guard,
        query: botIdQuery,
        responses: {
          200: '`{sessions: [{number, jid, botId, status, pushName, createdAt, lastActivityAt, expiresAt}], meta: {total}}`',
          ...unavailable,
        },
      },
      async (ctx, { query }) => {
        const sessions = await service().sessions(ctx.state.instance!.id, query.botId);
        ctx.body = {
          success: true,
          message: `${plural(sessions.length, 'session')} found`,
          sessions,
          meta: { total: sessions.length },
        };
      },
    );

    api.route(
      {
        method: 'post',
        path: '/sessions/:instance',
        summary: "Pause, resume or close a number's conversation",
        auth: guard,
        body: sessionBody,
        responses: {
          200: '`{session}` with its status after the action',
          400: '`Number is required`, `action must be one of: pause, resume, close`',
          404: '`Session not found`',
          ...unavailable,
        },
      },
      async (ctx, { body: b }) => {
        if (!b.number) throw new ValidationError('Number is required');
        const action = ACTIONS.find((a) => a === b.action);
        if (!action) throw new ValidationError(`action must be one of: ${ACTIONS.join(', ')}`);
        const chatJid = toRecipient(b.number);
        const instanceId = ctx.state.instance!.id;
        // botId is informational (the conversation is found by number); an unknown one is still refused.
        await service().requireBots(instanceId, b.botId);
        const session = await actors.for(ctx).call(instanceId, 'chatbot.control', { chatJid, action });
        ctx.body = { success: true, message: ACTION_DONE[action], session };
      },
    );
    return api;
  });
}
