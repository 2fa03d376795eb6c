import Router from '@koa/router';
import { z } from 'zod';
import type { ClusterRuntime } from '../../cluster/cluster-runtime.js';
import { ValidationError } from '../../errors.js';
import type { Store } from '../../store/store.js';
import { describeIssue, isPlainObject } from '../../validation.js';
import type { AppState } from '../app-state.js';
import { requireInstance } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { bodyOf, jsonBody } from '../json-body.js';

interface Deps {
  runtime: ClusterRuntime;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  callTimeoutMs: number;
}

const textBody = z.strictObject({
  number: z.string().trim().max(128).optional(),
  text: z.string().max(65_536).optional(),
  message: z.string().max(65_536).optional(),
});

/** `5511…`, `+55 11 …` or a full JID. */
function recipient(raw: string): string {
  if (raw.includes('@')) {
    if (!/^[\d-]{6,40}@(s\.whatsapp\.net|g\.us|lid)$/.test(raw)) throw new ValidationError('Invalid number');
    return raw;
  }
  const digits = raw.replace(/[\s+()-]/g, '');
  if (!/^\d{6,20}$/.test(digits)) throw new ValidationError('Invalid number');
  return `${digits}@s.whatsapp.net`;
}

/** Sends (spec 4.5 and the hosted product's text endpoint). */
export function messageRoutes(deps: Deps) {
  const router = new Router<AppState>({ prefix: '/api/message' });

  router.post('/text/:instance', requireInstance(deps.store, deps.auth), jsonBody(deps.maxBodyBytes), async (ctx) => {
    const raw = bodyOf(ctx);
    if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
    const parsed = textBody.safeParse(raw);
    if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
    const { number, text, message } = parsed.data;
    if (!number) throw new ValidationError('Number is required');
    if (text !== undefined && message !== undefined) throw new ValidationError("Invalid request body: send 'text' or 'message', not both");
    const content = text ?? message;
    if (!content) throw new ValidationError('Message is required');
    const to = recipient(number);
    const sent = await deps.runtime.router.call(ctx.state.instance!.id, 'msgnet.sendText', { to, text: content }, deps.callTimeoutMs);
    ctx.body = {
      success: true,
      message: 'Message sent',
      status: 'sent',
      data: {
        messageId: sent.messageId,
        direction: 'outgoing',
        messageType: 'text',
        content,
        to,
        timestamp: new Date(sent.timestamp).toISOString(),
      },
    };
  });

  return router;
}
