import { UnavailableError, MODULE_UNAVAILABLE } from '../../errors.js';
import type { HelpdeskService } from '../../integrations/helpdesk/helpdesk-service.js';
import { WEBHOOK_PATH, helpdeskPatchSchema, isHelpdeskAlias } from '../../integrations/helpdesk/helpdesk-settings.js';
import type { Store } from '../../store/store.js';
import { z } from 'zod';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { Authenticator, Guard } from '../auth.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** Undefined when HELPDESK_ENABLED is off: every endpoint answers 503. */
  helpdesk: HelpdeskService | undefined;
}

/** Chatwoot's webhook body: its `message_created` event and others, read by the bridge (see docs/helpdesk.md). */
const chatwootEvent = z.object({ event: z.string().optional() }).loose();

/**
 * Spec 4.7: the helpdesk (Chatwoot) integration, under `/api/helpdesk` and its alias `/api/chatwoot`,
 * and the inbox's webhook (`/api/helpdesk/webhook/:instanceId/:secret`, authenticated by its secret).
 * The module switch is checked first, so that a disabled module answers 503 whatever the instance.
 */
export function helpdeskRoutes(deps: Deps): ApiRouter[] {
  const available = () => {
    if (!deps.helpdesk) throw new UnavailableError(MODULE_UNAVAILABLE);
    return deps.helpdesk;
  };
  const instanceGuard = requireInstance(deps.store, deps.auth);
  const guard: Guard = Object.assign(
    async (ctx: Parameters<Guard>[0], next: Parameters<Guard>[1]) => {
      available();
      await instanceGuard(ctx, next);
    },
    { access: instanceGuard.access },
  );
  const unavailable = { 503: '`integration gateway not configured` (HELPDESK_ENABLED is off)' };

  const routers = ['/api/helpdesk', '/api/chatwoot'].map((prefix) => {
    const api = new ApiRouter({ prefix, tag: 'Helpdesk', maxBodyBytes: deps.maxBodyBytes });
    api.route(
      {
        method: 'post',
        path: '/set/:instance',
        summary: 'Create or update the Chatwoot integration and activate it (inbox created or reused)',
        auth: guard,
        rawBody: helpdeskPatchSchema,
        aliases: isHelpdeskAlias,
        responses: {
          200: '`{helpdesk}` (no token); saved with `status: error` when Chatwoot is unreachable',
          400: 'Settings missing or refused by Chatwoot',
          ...unavailable,
        },
      },
      async (ctx, { body }) => {
        const { view, warning } = await available().set(ctx.state.instance!, body, ctx);
        let message = 'Helpdesk integration activated';
        if (warning) message = `Helpdesk integration saved, but Chatwoot could not be reached: ${warning}`;
        else if (view.status === 'paused') message = 'Helpdesk integration saved and paused';
        ctx.body = { success: true, message, helpdesk: view };
      },
    );
    api.route(
      {
        method: 'get',
        path: '/list/:instance',
        summary: 'The Chatwoot integration, its API token in plaintext',
        auth: guard,
        responses: {
          200: '`{helpdesk}` with `apiToken` and `webhookUrl`',
          404: '`Helpdesk integration not found`',
          ...unavailable,
        },
      },
      async (ctx) => {
        ctx.body = {
          success: true,
          message: 'Helpdesk integration retrieved',
          helpdesk: await available().list(ctx.state.instance!),
        };
      },
    );
    // `unlink`: the hosted product's name of the delete.
    for (const path of ['/delete/:instance', '/unlink/:instance']) {
      api.route(
        {
          method: 'delete',
          path,
          summary: 'Remove the Chatwoot integration (the inbox is kept)',
          auth: guard,
          responses: { 200: '`{helpdesk: {inboxId}}`', 404: '`Helpdesk integration not found`', ...unavailable },
        },
        async (ctx) => {
          const { inboxId } = await available().remove(ctx.state.instance!, ctx);
          ctx.body = {
            success: true,
            message: 'Helpdesk integration removed; the Chatwoot inbox is kept',
            helpdesk: { inboxId },
          };
        },
      );
    }
    return api;
  });

  const webhook = new ApiRouter({ prefix: WEBHOOK_PATH, tag: 'Helpdesk', maxBodyBytes: deps.maxBodyBytes });
  webhook.route(
    {
      method: 'post',
      path: '/:instanceId/:secret',
      summary: "Chatwoot's webhook for the instance's inbox (the URL's secret authenticates it)",
      auth: 'public',
      rawBody: chatwootEvent,
      responses: {
        200: '`Event accepted` or `Event ignored`',
        404: 'Unknown instance or wrong secret',
        ...unavailable,
      },
    },
    async (ctx, { body }) => {
      const { accepted } = await available().webhook(ctx.params.instanceId ?? '', ctx.params.secret ?? '', body, ctx);
      ctx.body = { success: true, message: accepted ? 'Event accepted' : 'Event ignored' };
    },
  );
  return [...routers, webhook];
}
