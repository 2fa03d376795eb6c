import type { Next } from 'koa';
import { RateLimitError } from '../errors.js';
import type { RateLimiter } from '../cluster/rate-limiter.js';
import type { RateLimitMetrics } from '../metrics/metrics.js';
import type { AppContext } from './app-state.js';
import { resolvePresented } from './auth.js';
import type { Authenticator } from './auth.js';

export interface RateLimitOptions {
  perMinute: number;
  createPerMinute: number;
  /** Chatwoot's webhooks carry no token: counted per address in their own bucket, apart from the API's. */
  helpdeskWebhookPerMinute?: number;
  metrics?: RateLimitMetrics;
}

const HELPDESK_WEBHOOK = '/api/helpdesk/webhook/';

/**
 * Spec section 8: 100 requests a minute per token (every user of a token shares its bucket), 20 a minute
 * for instance creation, and the three X-RateLimit-* headers on every response, 429 included. Requests
 * without a valid token are counted per client address, so that guessing tokens is rate-limited too.
 */
export function rateLimit(limiter: RateLimiter, auth: Authenticator, o: RateLimitOptions) {
  return async (ctx: AppContext, next: Next) => {
    const { tokenHash, principal } = await resolvePresented(ctx, auth);
    const who = tokenHash === undefined || principal === undefined ? `ip:${ctx.ip}` : `token:${tokenHash}`;
    const creating = ctx.method === 'POST' && ctx.path.replace(/\/+$/, '').toLowerCase() === '/api/instance/new';
    const helpdesk = principal === undefined && ctx.path.startsWith(HELPDESK_WEBHOOK);
    const verdict = helpdesk
      ? limiter.hit(`helpdesk-webhook:ip:${ctx.ip}`, o.helpdeskWebhookPerMinute ?? o.perMinute, 60_000)
      : limiter.hit(creating ? `create:${who}` : `global:${who}`, creating ? o.createPerMinute : o.perMinute, 60_000);
    // Most verdicts are known at once (the node's own count): no turn of the microtask queue for them.
    const result = verdict instanceof Promise ? await verdict : verdict;
    ctx.set('X-RateLimit-Limit', String(result.limit));
    ctx.set('X-RateLimit-Remaining', String(result.remaining));
    ctx.set('X-RateLimit-Reset', String(result.resetAt));
    if (!result.allowed) {
      o.metrics?.rateLimited(creating ? 'create' : 'requests');
      throw new RateLimitError();
    }
    await next();
  };
}
