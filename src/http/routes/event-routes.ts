import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { isEventName } from '../../events/event-names.js';
import { deadLettersBody } from '../../events/webhooks/delivery.js';
import type { DeliveryQueue } from '../../events/webhooks/delivery.js';
import { newWebhookSecret, ROTATION_OVERLAP_MS } from '../../events/webhooks/webhook-signature.js';
import { SecretPurpose } from '../../security/secret-box.js';
import type { SecretBox } from '../../security/secret-box.js';
import { checkUrlSyntax } from '../../security/url-policy.js';
import type { WebhookRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
import { requireAccountOrInstance, requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  secrets: SecretBox;
  queue: DeliveryQueue;
  maxBodyBytes: number;
  allowPrivateUrls: boolean;
}

const LABEL = /^[A-Za-z0-9._-]{1,64}$/;

const webhookBody = z.strictObject({
  label: z
    .string()
    .regex(LABEL, 'use 1 to 64 letters, digits, dots, dashes or underscores')
    .optional()
    .describe('Which webhook (several per instance); default: "default"'),
  enabled: z
    .boolean()
    .optional()
    .describe('Default: true; false keeps the row but clears url, authorization, events, base64'),
  url: z.string().max(2048).optional().describe('http(s) target; required when enabled'),
  authorization: z
    .string()
    .max(4096)
    .optional()
    .describe("Sent as the Authorization header (stored sealed; omitted or '': none)"),
  byEvents: z.boolean().optional().describe('Append the event name to the URL (default: false)'),
  events: z.array(z.string().max(64)).max(64).optional().describe('Events to send (empty or omitted: all)'),
  base64: z.boolean().optional().describe('Include received media as base64 (default: false)'),
  mediaBase64: z.boolean().optional().describe("Alias of 'base64'"),
});

const rotateBody = z.strictObject({
  label: z.string().max(64).optional().describe('The webhook whose secret to rotate; default: "default"'),
});

/** The signing fields an update keeps as they were. */
function secretFields(w: WebhookRecord | undefined): Partial<WebhookRecord> {
  if (!w) return {};
  const { secretSealed, previousSecretSealed, previousSecretUntil } = w;
  return {
    ...(secretSealed !== undefined ? { secretSealed } : {}),
    ...(previousSecretSealed !== undefined && previousSecretUntil !== undefined
      ? { previousSecretSealed, previousSecretUntil }
      : {}),
  };
}

const redeliverBody = z.strictObject({
  ids: z.array(z.string().max(64)).max(1000).optional().describe('Dead letters to queue again (absent: all)'),
});

const labelQuery = (what: string) => z.object({ label: queryParam.text(what) });

/** The delete's body: clients of the hosted product name the label here rather than in the query. */
const deleteBody = z.strictObject({
  label: z.string().max(64).optional().describe('The webhook to delete (or `?label=`); default: "default"'),
});

/** The hosted product's limit: disabled webhooks are kept and do not count. */
export const MAX_ENABLED_WEBHOOKS = 3;

/** A webhook as the hosted product shows it: `authorization` as set (`''` when none), `mediaBase64` beside our `base64`. */
export function webhookView(w: WebhookRecord, authorization: string) {
  return {
    label: w.label,
    enabled: w.enabled,
    url: w.url,
    authorization,
    byEvents: w.byEvents,
    events: w.events,
    base64: w.base64,
    mediaBase64: w.base64,
    hasAuthorization: w.authorizationSealed !== undefined,
    hasSecret: w.secretSealed !== undefined,
    previousSecretValidUntil:
      w.previousSecretUntil !== undefined && Date.parse(w.previousSecretUntil) > Date.now()
        ? w.previousSecretUntil
        : null,
    updatedAt: w.updatedAt,
  };
}

/**
 * Per-instance webhooks (spec 4.10, section 6): upsert by label, read, delete; the dead letters and
 * their replay. The delivery itself is the DeliveryWorker's.
 */
export function eventRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/events', tag: 'Webhooks', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);

  /** The view, its authorization opened; one that no longer opens is shown sealed, as the hosted product does. */
  function view(ctx: RouteContext, w: WebhookRecord) {
    let authorization = '';
    if (w.authorizationSealed !== undefined) {
      try {
        authorization = deps.secrets.open(w.authorizationSealed, SecretPurpose.WebhookAuthorization);
      } catch (err) {
        ctx.state.log.warn({ err, label: w.label }, 'webhook authorization could not be decrypted');
        authorization = w.authorizationSealed;
      }
    }
    return webhookView(w, authorization);
  }

  async function upsert(ctx: RouteContext, instanceId: string, b: z.output<typeof webhookBody>) {
    if (b.base64 !== undefined && b.mediaBase64 !== undefined) {
      throw new ValidationError("Invalid request body: 'base64' and 'mediaBase64' are the same field; send only one");
    }
    const label = b.label ?? 'default';
    const existing = (await deps.store.webhooks.list(instanceId)).find((w) => w.label === label);
    // The catalog: the same label overwrites every field, so what the body leaves out takes its default.
    const enabled = b.enabled ?? true;
    let url = '';
    if (b.url !== undefined) {
      const checked = checkUrlSyntax(b.url.trim(), { allowPrivate: deps.allowPrivateUrls });
      if ('reason' in checked) throw new ValidationError(`Invalid webhook url: ${checked.reason}`);
      url = checked.url.toString();
    }
    if (enabled && !url) throw new ValidationError('url is required when the webhook is enabled');
    const unknown = (b.events ?? []).find((e) => !isEventName(e));
    if (unknown !== undefined) throw new ValidationError(`Invalid request body: unknown event '${unknown}'`);
    const now = new Date().toISOString();
    // A new webhook gets its signing secret here, shown in this answer only.
    const fresh = existing ? undefined : newWebhookSecret(deps.secrets);
    // The catalog: `enabled: false` clears url, authorization, events and mediaBase64 but keeps the row.
    const target = enabled
      ? {
          url,
          authorizationSealed: b.authorization
            ? deps.secrets.seal(b.authorization, SecretPurpose.WebhookAuthorization)
            : undefined,
          events: b.events ? [...new Set(b.events)] : [],
          base64: b.base64 ?? b.mediaBase64 ?? false,
        }
      : { url: '', authorizationSealed: undefined, events: [], base64: false };
    const webhook: WebhookRecord = {
      instanceId,
      label,
      enabled,
      ...target,
      byEvents: b.byEvents ?? false,
      // The signing secret is no client field: kept, so receivers still verify after an overwrite or a disable.
      ...secretFields(existing),
      ...(fresh ? { secretSealed: fresh.sealed } : {}),
      createdAt: existing?.createdAt ?? now,
      updatedAt: now,
    };
    if (!(await deps.store.webhooks.upsert(webhook, { maxEnabled: MAX_ENABLED_WEBHOOKS }))) {
      throw new ValidationError(
        `An instance has at most ${MAX_ENABLED_WEBHOOKS} enabled webhooks; disable or delete one first`,
      );
    }
    ctx.status = existing ? 200 : 201;
    ctx.body = {
      success: true,
      message: existing ? 'Webhook updated' : 'Webhook created',
      webhook: { ...view(ctx, webhook), ...(fresh ? { secret: fresh.secret } : {}) },
    };
  }

  const upserted = { 200: 'Webhook updated: `{webhook}`', 201: 'Webhook created: `{webhook}`' };
  api.route(
    {
      method: 'post',
      path: '/webhook/:instance',
      summary: 'Create or update a webhook (by label)',
      auth: guard,
      body: webhookBody,
      responses: upserted,
    },
    (ctx, { body }) => upsert(ctx, ctx.state.instance!.id, body),
  );

  // The hosted product's form: the instance is the one the TokenInstance belongs to.
  api.route(
    {
      method: 'post',
      path: '/webhook',
      summary: "Create or update a webhook of the TokenInstance's own instance",
      auth: requireAccountOrInstance(deps.auth),
      body: webhookBody,
      responses: { ...upserted, 400: 'Instance name is required (with a TokenAccount)' },
    },
    async (ctx, { body }) => {
      const p = ctx.state.principal;
      if (p?.kind !== 'instance') throw new ValidationError('Instance name is required');
      await upsert(ctx, p.instance.id, body);
    },
  );

  async function read(ctx: RouteContext, label: string | undefined) {
    const webhooks = await deps.store.webhooks.list(ctx.state.instance!.id);
    if (label !== undefined) {
      const one = webhooks.find((w) => w.label === label);
      if (!one) throw new NotFoundError('Webhook not found');
      ctx.body = { success: true, message: 'Webhook found', webhook: view(ctx, one) };
      return;
    }
    const def = webhooks.find((w) => w.label === 'default') ?? webhooks[0];
    ctx.body = {
      success: true,
      message: `${webhooks.length} ${webhooks.length === 1 ? 'webhook' : 'webhooks'} found`,
      webhook: def ? view(ctx, def) : null,
      // Sorted by label, as the hosted product lists them (the store keeps creation order).
      webhooks: [...webhooks]
        .sort((a, b) => (a.label < b.label ? -1 : a.label > b.label ? 1 : 0))
        .map((w) => view(ctx, w)),
    };
  }

  for (const path of ['/getWebhook/:instance', '/webhook/:instance']) {
    api.route(
      {
        method: 'get',
        path,
        summary: 'Read the webhooks (or one, with ?label=)',
        auth: guard,
        query: labelQuery('Only this webhook'),
        responses: { 200: '`{webhook, webhooks}`, or `{webhook}` with ?label=', 404: 'Webhook not found' },
      },
      (ctx, { query }) => read(ctx, query.label),
    );
  }

  api.route(
    {
      method: 'delete',
      path: '/webhook/:instance',
      summary: 'Delete a webhook',
      auth: guard,
      query: labelQuery('The webhook to delete (or `label` in the body); default: "default"'),
      body: deleteBody,
      responses: { 200: 'Webhook deleted', 404: 'Webhook not found' },
    },
    async (ctx, { query, body }) => {
      const fromBody = body.label?.trim() || undefined;
      // Two different labels are a mistake to refuse: deleting either one could be the wrong delete.
      if (query.label !== undefined && fromBody !== undefined && query.label !== fromBody) {
        throw new ValidationError("Invalid request body: 'label' differs between the query and the body");
      }
      const label = query.label ?? fromBody ?? 'default';
      if (!(await deps.store.webhooks.delete(ctx.state.instance!.id, label))) {
        throw new NotFoundError('Webhook not found');
      }
      ctx.body = { success: true, message: 'Webhook deleted', webhook: { label } };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/webhook/:instance/rotate-secret',
      summary: 'Give a webhook a new signing secret (the old one still signs for 24 h)',
      auth: guard,
      body: rotateBody,
      responses: { 200: '`{webhook, secret}`: the new `whsec_…` secret, shown only here', 404: 'Webhook not found' },
    },
    async (ctx, { body }) => {
      const instanceId = ctx.state.instance!.id;
      const label = body.label?.trim() || 'default';
      const existing = (await deps.store.webhooks.list(instanceId)).find((w) => w.label === label);
      if (!existing) throw new NotFoundError('Webhook not found');
      const fresh = newWebhookSecret(deps.secrets);
      const now = Date.now();
      const { previousSecretSealed: _p, previousSecretUntil: _u, ...rest } = existing;
      const webhook: WebhookRecord = {
        ...rest,
        secretSealed: fresh.sealed,
        // A webhook made before signing had no secret: nothing to keep signing with.
        ...(existing.secretSealed !== undefined
          ? {
              previousSecretSealed: existing.secretSealed,
              previousSecretUntil: new Date(now + ROTATION_OVERLAP_MS).toISOString(),
            }
          : {}),
        updatedAt: new Date(now).toISOString(),
      };
      await deps.store.webhooks.upsert(webhook);
      ctx.body = {
        success: true,
        message: 'Webhook secret rotated',
        webhook: { ...view(ctx, webhook), secret: fresh.secret },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/deadLetters/:instance',
      summary: 'Deliveries given up on',
      auth: guard,
      responses: {
        200: '`{deadLetters: [{id, label, event, url, attempts, lastError, createdAt, failedAt, envelope}]}`',
      },
    },
    async (ctx) => {
      ctx.body = deadLettersBody(await deps.queue.deadLetters(ctx.state.instance!.id));
    },
  );

  api.route(
    {
      method: 'post',
      path: '/redeliver/:instance',
      summary: 'Queue dead letters again',
      auth: guard,
      body: redeliverBody,
      responses: { 200: '`{redelivered: <count>}`' },
    },
    async (ctx, { body }) => {
      const count = await deps.queue.redeliver(ctx.state.instance!.id, body.ids);
      ctx.body = {
        success: true,
        message: `${count} ${count === 1 ? 'delivery' : 'deliveries'} queued again`,
        redelivered: count,
      };
    },
  );

  return api;
}
