import Router from '@koa/router';
import type { AccountWebhookService } from '../../accounts/account-webhook-service.js';
import type { Store } from '../../store/store.js';
import type { AppState } from '../app-state.js';
import { requireAccountScope } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';
import { deadLettersBody } from '../../events/webhooks/delivery.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  accountWebhooks: AccountWebhookService;
  maxBodyBytes: number;
}

/** The account webhook (spec 4.9): read, configure, rotate the signing secret, send a test event, dead letters. */
export function accountWebhookRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/account/webhook' });
  const guard = requireAccountScope(deps.store, deps.auth);
  const body = jsonBody(deps.maxBodyBytes);

  router.get('/', guard, async (ctx) => {
    ctx.body = { success: true, ...(await deps.accountWebhooks.get(ctx.state.account!.id)) };
  });

  router.patch('/', guard, body, async (ctx) => {
    ctx.body = { success: true, ...(await deps.accountWebhooks.update(ctx.state.account!.id, bodyOf(ctx))) };
  });

  router.post('/rotate-secret', guard, async (ctx) => {
    ctx.body = { success: true, ...(await deps.accountWebhooks.rotateSecret(ctx.state.account!.id)) };
  });

  router.post('/test', guard, async (ctx) => {
    await deps.accountWebhooks.sendTest(ctx.state.account!.id);
    ctx.body = { success: true, message: 'Test event queued', event: 'enterprise.webhook.test' };
  });

  router.get('/deadLetters', guard, async (ctx) => {
    // Same item shape as GET /api/events/deadLetters/:instance, without the per-instance webhook label.
    ctx.body = deadLettersBody(await deps.accountWebhooks.deadLetters(ctx.state.account!.id), false);
  });

  router.post('/redeliver', guard, body, async (ctx) => {
    const count = await deps.accountWebhooks.redeliver(ctx.state.account!.id, bodyOf(ctx));
    ctx.body = { success: true, message: `${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again`, redelivered: count };
  });

  return router;
}
