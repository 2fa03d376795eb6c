import Router from '@koa/router';
import type { Next } from 'koa';
import { z } from 'zod';
import { UnavailableError, ValidationError } from '../../errors.js';
import { parseCreateBody, parsePatchBody } from '../../integrations/chatbot/bot-schema.js';
import type { SessionAction } from '../../integrations/chatbot/chatbot-calls.js';
import { botView } from '../../integrations/chatbot/chatbot-service.js';
import type { ChatbotService } from '../../integrations/chatbot/chatbot-service.js';
import { MODULE_UNAVAILABLE } from '../../integrations/module-unavailable.js';
import type { AppContext, AppState } from '../app-state.js';
import { requireAccountOrInstance, requireInstance } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';
import { nameRequired, parseBody, queryString, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

export interface ChatbotRouteDeps extends ActorRouteDeps {
  /** Undefined when CHATBOT_ENABLED is off: every chatbot endpoint answers 503. */
  chatbot: ChatbotService | undefined;
}

/** The spec's answer when the module is disabled on the server (section 7). */
/** Spec 8: the re-sync after a bot removal. */
export const RESYNC_TIMEOUT_MS = 60_000;
const PREFIXES = ['/api/chatbot', '/api/typebot'] as const;
const ACTIONS: readonly SessionAction[] = ['pause', 'resume', 'close'];
const ACTION_DONE: Record<SessionAction, string> = { pause: 'Session paused', resume: 'Session resumed', close: 'Session closed' };

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

const paths = (action: string) => PREFIXES.map((p) => `${p}/${action}/:instance`);
const plural = (n: number, one: string) => `${n} ${one}${n === 1 ? '' : 's'}`;

/**
 * The chatbot integration (spec 4.8), also under `/api/typebot/*`. Bot creation and update run in the
 * instance's actor (serialised per instance); reads come from the store on any node; removal deletes the
 * rows here, then asks the owner to re-sync (best effort, 60 s).
 */
export function chatbotRoutes(deps: ChatbotRouteDeps) {
  const router = new Router<AppState>();
  const call = deps.runtime.router;
  const body = jsonBody(deps.maxBodyBytes);
  const moduleOn = async (_ctx: AppContext, next: Next) => {
    if (!deps.chatbot) throw new UnavailableError(MODULE_UNAVAILABLE);
    await next();
  };
  // The token is checked first (401/403), then the module (503), then the instance (404).
  const guard = [requireAccountOrInstance(deps.auth), moduleOn, requireInstance(deps.store, deps.auth)] as const;
  const service = () => deps.chatbot!;
  for (const prefix of PREFIXES) {
    for (const action of ['set', 'start']) nameRequired(router, 'post', `${prefix}/${action}`, deps.auth);
    for (const action of ['list', 'sessions']) nameRequired(router, 'get', `${prefix}/${action}`, deps.auth);
  }

  router.post(paths('set'), ...guard, body, async (ctx) => {
    const patch = parseCreateBody(bodyOf(ctx));
    const bot = await call.call(ctx.state.instance!.id, 'chatbot.createBot', { patch }, deps.callTimeoutMs);
    ctx.status = 201;
    ctx.body = { success: true, message: 'Chatbot bot created', bot: botView(bot) };
  });

  router.patch(paths('update'), ...guard, body, async (ctx) => {
    const { botId, patch } = parsePatchBody(bodyOf(ctx), queryString(ctx, 'botId'));
    const bot = await call.call(ctx.state.instance!.id, 'chatbot.updateBot', { botId, patch }, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Chatbot bot updated', bot: botView(bot) };
  });

  router.get(paths('list'), ...guard, async (ctx) => {
    const { integration, bots } = await service().list(ctx.state.instance!.id, queryString(ctx, 'botId'));
    ctx.body = { success: true, message: `${plural(bots.length, 'bot')} found`, integration, bots };
  });

  router.delete(paths('delete'), ...guard, async (ctx) => {
    const instance = ctx.state.instance!;
    const botId = queryString(ctx, 'botId');
    const { deleted, remaining } = await service().removeBots(instance.id, botId);
    // The removal stands whatever the owner answers (spec 3): a failed re-sync is only logged.
    await call.callIfOwned(instance.id, 'chatbot.sync', {}, RESYNC_TIMEOUT_MS).catch((err: unknown) => {
      ctx.state.log.warn({ err, instance: instance.name }, 'chatbot bots removed; the re-sync failed');
    });
    ctx.body = {
      success: true,
      message: botId === undefined ? 'Chatbot bots deleted' : 'Chatbot bot deleted',
      deleted,
      remaining,
      integration: remaining > 0 ? 'active' : 'deactivated',
    };
  });

  router.post(paths('start'), ...guard, body, async (ctx) => {
    const b = parseBody(ctx, startBody);
    if (!b.number) throw new ValidationError('Number is required');
    const chatJid = toRecipient(b.number);
    const instanceId = ctx.state.instance!.id;
    await service().requireBots(instanceId, b.botId);
    const variables = Object.fromEntries(Object.entries(b.variables ?? {}).map(([k, v]) => [k, String(v)]));
    const session = await call.call(instanceId, 'chatbot.start', { chatJid, ...(b.botId ? { botId: b.botId } : {}), variables }, deps.callTimeoutMs);
    ctx.body = { success: true, message: 'Chatbot flow started', session };
  });

  router.get(paths('sessions'), ...guard, async (ctx) => {
    const sessions = await service().sessions(ctx.state.instance!.id, queryString(ctx, 'botId'));
    ctx.body = { success: true, message: `${plural(sessions.length, 'session')} found`, sessions, meta: { total: sessions.length } };
  });

  router.post(paths('sessions'), ...guard, body, async (ctx) => {
    const b = parseBody(ctx, sessionBody);
    if (!b.number) throw new ValidationError('Number is required');
    const action = ACTIONS.find((a) => a === b.action);
    if (!action) throw new ValidationError(`action must be one of: ${ACTIONS.join(', ')}`);
    const chatJid = toRecipient(b.number);
    const instanceId = ctx.state.instance!.id;
    // botId is informational (the conversation is found by number); an unknown one is still refused.
    await service().requireBots(instanceId, b.botId);
    const session = await call.call(instanceId, 'chatbot.control', { chatJid, action }, deps.callTimeoutMs);
    ctx.body = { success: true, message: ACTION_DONE[action], session };
  });

  return router;
}
