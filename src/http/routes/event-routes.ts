import Router from '@koa/router';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { isEventName } from '../../events/event-names.js';
import { deadLettersBody } from '../../events/webhooks/delivery.js';
import type { DeliveryQueue } from '../../events/webhooks/delivery.js';
import type { WebhookDispatcher } from '../../events/webhooks/webhook-dispatcher.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { checkUrlSyntax } from '../../security/url-policy.js';
import type { WebhookRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { describeIssue, isPlainObject } from '../../validation.js';
import type { AppContext, AppState } from '../app-state.js';
import { requireAccountOrInstance, requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  secrets: SecretBox;
  queue: DeliveryQueue;
  dispatcher: WebhookDispatcher;
  maxBodyBytes: number;
  allowPrivateUrls: boolean;
}

const LABEL = /^[A-Za-z0-9._-]{1,64}$/;

const webhookBody = z.strictObject({
  label: z.string().regex(LABEL, 'use 1 to 64 letters, digits, dots, dashes or underscores').optional(),
  enabled: z.boolean().optional(),
  url: z.string().max(2048).optional(),
  authorization: z.string().max(4096).optional(),
  byEvents: z.boolean().optional(),
  events: z.array(z.string().max(64)).max(64).optional(),
  base64: z.boolean().optional(),
  mediaBase64: z.boolean().optional(),
});

/** A webhook as the API shows it: `mediaBase64` mirrors `base64` (the hosted product's name); never the authorization. */
export function webhookView(w: WebhookRecord) {
  return {
    label: w.label,
    enabled: w.enabled,
    url: w.url,
    byEvents: w.byEvents,
    events: w.events,
    base64: w.base64,
    mediaBase64: w.base64,
    hasAuthorization: w.authorizationSealed !== undefined,
    updatedAt: w.updatedAt,
  };
}

/**
 * Per-instance webhooks (spec 4.10, section 6): upsert by label, read, delete; the dead letters and
 * their replay. The delivery itself is the DeliveryWorker's.
 */
export function eventRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/events' });
  const guard = requireInstance(deps.store, deps.auth);
  const body = jsonBody(deps.maxBodyBytes);

  async function upsert(ctx: AppContext, instanceId: string) {
    const raw = bodyOf(ctx);
    if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
    const parsed = webhookBody.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    const b = parsed.data;
    if (b.base64 !== undefined && b.mediaBase64 !== undefined) {
      throw new ValidationError("Invalid request body: 'base64' and 'mediaBase64' are the same field; send only one");
    }
    const label = b.label ?? 'default';
    const existing = (await deps.store.webhooks.list(instanceId)).find((w) => w.label === label);
    const enabled = b.enabled ?? existing?.enabled ?? true;
    let url = existing?.url ?? '';
    if (b.url !== undefined) {
      const checked = checkUrlSyntax(b.url.trim(), { allowPrivate: deps.allowPrivateUrls });
      if ('reason' in checked) throw new ValidationError(`Invalid webhook url: ${checked.reason}`);
      url = checked.url.toString();
    }
    if (enabled && !url) throw new ValidationError('url is required when the webhook is enabled');
    const unknown = (b.events ?? []).find((e) => !isEventName(e));
    if (unknown !== undefined) throw new ValidationError(`Invalid request body: unknown event '${unknown}'`);
    const now = new Date().toISOString();
    const webhook: WebhookRecord = {
      instanceId,
      label,
      enabled,
      url,
      authorizationSealed:
        b.authorization === undefined
          ? existing?.authorizationSealed
          : b.authorization === ''
            ? undefined
            : deps.secrets.seal(b.authorization, SecretPurpose.WebhookAuthorization),
      byEvents: b.byEvents ?? existing?.byEvents ?? false,
      events: b.events ? [...new Set(b.events)] : (existing?.events ?? []),
      base64: b.base64 ?? b.mediaBase64 ?? existing?.base64 ?? false,
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    await deps.store.webhooks.upsert(webhook);
    deps.dispatcher.invalidate(instanceId);
    ctx.status = existing ? 200 : 201;
    ctx.body = { success: true, message: existing ? 'Webhook updated' : 'Webhook created', webhook: webhookView(webhook) };
  }

  router.post('/webhook/:instance', guard, body, (ctx) => upsert(ctx, ctx.state.instance!.id));

  // The hosted product's form: the instance is the one the TokenInstance belongs to.
  router.post('/webhook', requireAccountOrInstance(deps.auth), body, async (ctx) => {
    const p = ctx.state.principal;
    if (p?.kind !== 'instance') throw new ValidationError('Instance name is required');
    await upsert(ctx, p.instance.id);
  });

  async function read(ctx: AppContext) {
    const webhooks = await deps.store.webhooks.list(ctx.state.instance!.id);
    const label = typeof ctx.query.label === 'string' && ctx.query.label ? ctx.query.label : undefined;
    if (label !== undefined) {
      const one = webhooks.find((w) => w.label === label);
      if (!one) throw new NotFoundError('Webhook not found');
      ctx.body = { success: true, message: 'Webhook found', webhook: webhookView(one) };
      return;
    }
    const def = webhooks.find((w) => w.label === 'default') ?? webhooks[0];
    ctx.body = {
      success: true,
      message: `${webhooks.length} ${webhooks.length === 1 ? 'webhook' : 'webhooks'} found`,
      webhook: def ? webhookView(def) : null,
      webhooks: webhooks.map(webhookView),
    };
  }

  router.get('/getWebhook/:instance', guard, read);
  router.get('/webhook/:instance', guard, read);

  router.delete('/webhook/:instance', guard, async (ctx) => {
    const label = typeof ctx.query.label === 'string' && ctx.query.label ? ctx.query.label : 'default';
    if (!(await deps.store.webhooks.delete(ctx.state.instance!.id, label))) throw new NotFoundError('Webhook not found');
    deps.dispatcher.invalidate(ctx.state.instance!.id);
    ctx.body = { success: true, message: 'Webhook deleted', webhook: { label } };
  });

  router.get('/deadLetters/:instance', guard, async (ctx) => {
    ctx.body = deadLettersBody(await deps.queue.deadLetters(ctx.state.instance!.id));
  });

  router.post('/redeliver/:instance', guard, body, async (ctx) => {
    const raw = bodyOf(ctx);
    const parsed = z.strictObject({ ids: z.array(z.string().max(64)).max(1000).optional() }).safeParse(raw);
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    const count = await deps.queue.redeliver(ctx.state.instance!.id, parsed.data.ids);
    deps.dispatcher.invalidate(ctx.state.instance!.id);
    ctx.body = { success: true, message: `${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again`, redelivered: count };
  });

  return router;
}
