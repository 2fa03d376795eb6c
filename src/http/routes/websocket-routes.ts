import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { isEventName } from '../../events/event-names.js';
import type { WebsocketConfig } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { describeIssue, isPlainObject } from '../../validation.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';

interface Deps {
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
}

const bodySchema = z.strictObject({
  enabled: z.boolean(),
  events: z
    .array(z.string().max(64))
    .max(64)
    .optional()
    .describe('Events to send (empty or omitted: all six instance events); cleared when enabled is false'),
  base64: z.boolean().optional().describe('Include received media as base64 (default false; false when disabled)'),
});

/** The body as clients send it: `parseWebsocketBody` folds `mediaBase64` into `base64`, then applies `bodySchema`. */
const documentedBody = bodySchema.extend({ mediaBase64: z.boolean().optional().describe("Alias of 'base64'") });

function invalid(detail: string): ValidationError {
  return new ValidationError(`Invalid request body: ${detail}`);
}

/**
 * The body of POST /api/events/websocket/:instance: `{enabled, events?, base64?}`, with `mediaBase64` as
 * the hosted product's spelling of `base64`. `null` counts as absent. The body replaces the stored block
 * (catalog section 10): `events` omitted is every event (`[]`), `base64` omitted is false, and
 * `enabled: false` clears both.
 */
export function parseWebsocketBody(raw: unknown): WebsocketConfig {
  if (!isPlainObject(raw)) throw invalid('expected a JSON object');
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(raw)) if (value !== null) body[key] = value;
  if ('mediaBase64' in body) {
    if ('base64' in body) throw invalid("'mediaBase64' and 'base64' are the same field; send only one");
    body.base64 = body.mediaBase64;
    delete body.mediaBase64;
  }
  const parsed = bodySchema.safeParse(body);
  if (!parsed.success) throw invalid(describeIssue(parsed.error));
  const { enabled, events, base64 } = parsed.data;
  const names = [...new Set((events ?? []).map((e) => e.trim()).filter(Boolean))];
  const unknown = names.find((e) => !isEventName(e));
  if (unknown !== undefined) throw invalid(`field 'events': unknown event '${unknown}'`);
  // The catalog: disabling clears the filter and the media flag (a later enable starts from all events).
  if (!enabled) return { enabled, events: [], base64: false };
  return { enabled, events: names, base64: base64 ?? false };
}

export function websocketView(config: WebsocketConfig) {
  return { enabled: config.enabled, events: config.events, base64: config.base64, mediaBase64: config.base64 };
}

/** Spec section 4.10: the WebSocket configuration of an instance (one per instance, any node serves it). */
export function websocketRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/events', tag: 'WebSocket', maxBodyBytes: deps.maxBodyBytes });
  const guard = requireInstance(deps.store, deps.auth);

  api.route(
    {
      method: 'post',
      path: '/websocket/:instance',
      summary: 'Configure the WebSocket events of an instance (GET /ws/:instance)',
      auth: guard,
      rawBody: documentedBody,
      responses: {
        200: 'WebSocket configuration saved successfully: `{websocket: {enabled, events, base64, mediaBase64}}`',
      },
    },
    async (ctx, { body }) => {
      const instance = ctx.state.instance!;
      const websocket = parseWebsocketBody(body);
      if (!(await deps.store.instances.updateConfigBlock(instance.id, 'websocket', websocket))) {
        throw new NotFoundError('Instance not found');
      }
      ctx.body = {
        success: true,
        message: 'WebSocket configuration saved successfully',
        websocket: websocketView(websocket),
      };
    },
  );

  for (const path of ['/getWebsocket/:instance', '/websocket/:instance']) {
    api.route(
      {
        method: 'get',
        path,
        summary: 'Read the WebSocket configuration',
        auth: guard,
        responses: {
          200: '`{websocket: {enabled, events, base64, mediaBase64}}` (also when disabled)',
          404: 'WebSocket not configured for this instance',
        },
      },
      (ctx) => {
        const websocket = ctx.state.instance!.config.websocket;
        // No block stored (never configured, at creation or here) is the catalog's 404, unlike a disabled one.
        if (!websocket) throw new NotFoundError('WebSocket not configured for this instance');
        ctx.body = { success: true, message: 'WebSocket configuration retrieved', websocket: websocketView(websocket) };
      },
    );
  }

  return api;
}
