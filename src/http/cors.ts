import type { Next } from 'koa';
import { ForbiddenError } from '../errors.js';
import type { AccountRecord } from '../store/records.js';
import type { AppContext } from './app-state.js';

/**
 * CORS (spec section 8): only origins authorised for the account. A preflight carries no token, so it
 * is answered for any origin that some account authorises; the real request is then checked against the
 * caller's own account (checkAccountOrigin). No credentials, no cookies.
 */

const ALLOW_METHODS = 'GET, POST, PUT, DELETE, OPTIONS';
const ALLOW_HEADERS = 'Content-Type, Authorization, token';
const EXPOSE_HEADERS = 'Content-Length, X-Ignored-Fields';

function crossOrigin(ctx: AppContext): string | undefined {
  const origin = ctx.get('origin').toLowerCase();
  if (!origin || origin === `${ctx.protocol}://${ctx.host}`.toLowerCase()) return undefined;
  return origin;
}

/** Knows every origin that any account authorises (briefly cached: preflights must be cheap). */
export type KnownOrigins = () => Promise<ReadonlySet<string>>;

export function cachedKnownOrigins(load: () => Promise<AccountRecord[]>, ttlMs = 5000): KnownOrigins {
  let cache: { at: number; origins: Set<string> } | undefined;
  return async () => {
    if (cache && Date.now() - cache.at < ttlMs) return cache.origins;
    const origins = new Set((await load()).flatMap((a) => a.allowedOrigins));
    cache = { at: Date.now(), origins };
    return origins;
  };
}

export function cors(knownOrigins: KnownOrigins) {
  return async (ctx: AppContext, next: Next) => {
    ctx.vary('Origin');
    const origin = crossOrigin(ctx);
    if (origin === undefined || ctx.method !== 'OPTIONS' || !ctx.get('access-control-request-method')) {
      await next();
      return;
    }
    if (!(await knownOrigins()).has(origin)) throw new ForbiddenError('Origin not allowed');
    ctx.set('Access-Control-Allow-Origin', origin);
    ctx.set('Access-Control-Allow-Methods', ALLOW_METHODS);
    ctx.set('Access-Control-Allow-Headers', ALLOW_HEADERS);
    ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
    ctx.set('Access-Control-Max-Age', '600');
    ctx.status = 204;
  };
}

/** A cross-origin request must come from an origin of the caller's account; refused before it acts. */
export function checkAccountOrigin(ctx: AppContext, account: AccountRecord): void {
  const origin = crossOrigin(ctx);
  if (origin === undefined) return;
  if (!account.allowedOrigins.includes(origin)) throw new ForbiddenError('Origin not allowed');
  ctx.set('Access-Control-Allow-Origin', origin);
  ctx.set('Access-Control-Expose-Headers', EXPOSE_HEADERS);
}
