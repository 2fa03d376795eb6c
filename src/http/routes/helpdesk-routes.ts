import Router from '@koa/router';
import type { Next } from 'koa';
import { UnavailableError } from '../../errors.js';
import type { HelpdeskService } from '../../integrations/helpdesk/helpdesk-service.js';
import { WEBHOOK_PATH } from '../../integrations/helpdesk/helpdesk-settings.js';
import { MODULE_UNAVAILABLE } from '../../integrations/module-unavailable.js';
import type { Store } from '../../store/store.js';
import type { AppContext, AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** Undefined when HELPDESK_ENABLED is off: every endpoint answers 503. */
  helpdesk: HelpdeskService | undefined;
}


/**
 * Spec 4.7: the helpdesk (Chatwoot) integration, under `/api/helpdesk` and its alias `/api/chatwoot`,
 * and the inbox's webhook (`/api/helpdesk/webhook/:instanceId/:secret`, authenticated by its secret).
 * The module switch is checked first, so that a disabled module answers 503 whatever the instance.
 */
export function helpdeskRoutes(deps: Deps): Router<AppState>[] {
  const gate = async (_ctx: AppContext, next: Next) => {
    if (!deps.helpdesk) throw new UnavailableError(MODULE_UNAVAILABLE);
    await next();
  };
  const service = () => deps.helpdesk!;
  const guard = requireInstance(deps.store, deps.auth);
  const body = jsonBody(deps.maxBodyBytes);

  const routers = ['/api/helpdesk', '/api/chatwoot'].map((prefix) => {
    const router = new Router<AppState>({ prefix });
    router.post('/set/:instance', gate, guard, body, async (ctx) => {
      const { view, warning } = await service().set(ctx.state.instance!, bodyOf(ctx));
      let message = 'Helpdesk integration activated';
      if (warning) message = `Helpdesk integration saved, but Chatwoot could not be reached: ${warning}`;
      else if (view.status === 'paused') message = 'Helpdesk integration saved and paused';
      ctx.body = { success: true, message, helpdesk: view };
    });
    router.get('/list/:instance', gate, guard, async (ctx) => {
      ctx.body = { success: true, message: 'Helpdesk integration retrieved', helpdesk: await service().list(ctx.state.instance!) };
    });
    router.delete('/delete/:instance', gate, guard, async (ctx) => {
      const { inboxId } = await service().remove(ctx.state.instance!);
      ctx.body = { success: true, message: 'Helpdesk integration removed; the Chatwoot inbox is kept', helpdesk: { inboxId } };
    });
    return router;
  });

  const webhook = new Router<AppState>({ prefix: WEBHOOK_PATH });
  webhook.post('/:instanceId/:secret', gate, body, async (ctx) => {
    const { accepted } = await service().webhook(ctx.params.instanceId ?? '', ctx.params.secret ?? '', bodyOf(ctx));
    ctx.body = { success: true, message: accepted ? 'Event accepted' : 'Event ignored' };
  });
  return [...routers, webhook];
}
