import { NotFoundError, UnavailableError, MODULE_UNAVAILABLE } from '../../errors.js';
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
    // Under the hosted product's prefix the answers also carry its flat snake_case fields (and set is 201).
    const hosted = prefix === '/api/chatwoot';
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
        const instance = ctx.state.instance!;
        const { view, warning } = await available().set(instance, body, ctx);
        let message = hosted ? 'chatwoot integration activated' : 'Helpdesk integration activated';
        if (warning) message = `Helpdesk integration saved, but Chatwoot could not be reached: ${warning}`;
        else if (view.status === 'paused') message = 'Helpdesk integration saved and paused';
        if (hosted) ctx.status = 201;
        ctx.body = {
          success: true,
          message,
          helpdesk: view,
          ...(hosted ? { instance: instance.name, status: view.status, bridge_integration_id: instance.id } : {}),
        };
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
        const instance = ctx.state.instance!;
        const view = await available().list(instance);
        ctx.body = {
          success: true,
          message: 'Helpdesk integration retrieved',
          helpdesk: view,
          ...(hosted
            ? {
                instance_name: instance.name,
                status: view.status,
                bridge_integration_id: instance.id,
                chatwoot_base_url: view.baseUrl,
                chatwoot_account_id: view.accountId,
                chatwoot_api_token: view.apiToken ?? '',
                chatwoot_inbox_id: view.inboxId,
                chatwoot_inbox_name: view.inboxName,
                last_error: view.last_error,
                created_at: instance.createdAt,
                sign_messages: view.signMessages,
                ignore_groups: view.ignoreGroups,
                start_as_pending: view.startAsPending,
                reopen_resolved: view.reopenResolved,
              }
            : {}),
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
          let inboxId: number | null;
          try {
            ({ inboxId } = await available().remove(ctx.state.instance!, ctx));
          } catch (err) {
            if (hosted && err instanceof NotFoundError) throw new NotFoundError('no chatwoot integration to delete');
            throw err;
          }
          ctx.body = {
            success: true,
            message: hosted
              ? 'chatwoot integration deactivated'
              : 'Helpdesk integration removed; the Chatwoot inbox is kept',
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
