import { patchBody, redeliverBody } from '../../accounts/account-webhook-service.js';
import type { AccountWebhookService } from '../../accounts/account-webhook-service.js';
import { deadLettersBody } from '../../events/webhooks/delivery.js';
import type { Store } from '../../store/store.js';
import { ApiRouter } from '../api-router.js';
import { requireAccountScope } from '../auth.js';
import type { Authenticator } from '../auth.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  accountWebhooks: AccountWebhookService;
  maxBodyBytes: number;
}

/** The account webhook (spec 4.9): read, configure, rotate the signing secret, send a test event, dead letters. */
export function accountWebhookRoutes(deps: Deps) {
  const api = new ApiRouter({
    prefix: '/api/account/webhook',
    tag: 'Account webhook',
    maxBodyBytes: deps.maxBodyBytes,
  });
  const guard = requireAccountScope(deps.store, deps.auth);
  const view = '`{url, events, enabled, secretMasked}`';

  api.route(
    {
      method: 'get',
      path: '/',
      summary: "The account's webhook for Enterprise events",
      auth: guard,
      responses: { 200: view },
    },
    async (ctx) => {
      ctx.body = { success: true, ...(await deps.accountWebhooks.get(ctx.state.account!.id)) };
    },
  );

  api.route(
    {
      method: 'patch',
      path: '/',
      summary: 'Configure the account webhook',
      auth: guard,
      rawBody: patchBody,
      responses: { 200: view },
    },
    async (ctx, { body }) => {
      ctx.body = { success: true, ...(await deps.accountWebhooks.update(ctx.state.account!.id, body)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/rotate-secret',
      summary: 'Issue a new signing secret (shown only now)',
      auth: guard,
      responses: { 200: '`{secret, …}`' },
    },
    async (ctx) => {
      ctx.body = { success: true, ...(await deps.accountWebhooks.rotateSecret(ctx.state.account!.id)) };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/test',
      summary: 'Queue an enterprise.webhook.test event',
      auth: guard,
      responses: { 200: 'Test event queued' },
    },
    async (ctx) => {
      await deps.accountWebhooks.sendTest(ctx.state.account!.id);
      ctx.body = { success: true, message: 'Test event queued', event: 'enterprise.webhook.test' };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/deadLetters',
      summary: 'Account deliveries given up on',
      auth: guard,
      responses: { 200: '`{deadLetters: [{id, event, url, attempts, lastError, createdAt, failedAt, envelope}]}`' },
    },
    async (ctx) => {
      // Same item shape as GET /api/events/deadLetters/:instance, without the per-instance webhook label.
      ctx.body = deadLettersBody(await deps.accountWebhooks.deadLetters(ctx.state.account!.id), false);
    },
  );

  api.route(
    {
      method: 'post',
      path: '/redeliver',
      summary: 'Queue account dead letters again',
      auth: guard,
      rawBody: redeliverBody,
      responses: { 200: '`{redelivered: <count>}`' },
    },
    async (ctx, { body }) => {
      const count = await deps.accountWebhooks.redeliver(ctx.state.account!.id, body);
      ctx.body = {
        success: true,
        message: `${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again`,
        redelivered: count,
      };
    },
  );

  return api;
}
