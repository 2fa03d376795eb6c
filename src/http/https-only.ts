import type { Next } from 'koa';
import { ForbiddenError } from '../errors.js';
import type { AppContext } from './app-state.js';

/**
 * Only HTTPS is accepted (spec section 1): a request must arrive over TLS or through a trusted proxy
 * that says `X-Forwarded-Proto: https` (Koa's `app.proxy`). Health probes are exempt: load balancers
 * usually probe over plain HTTP inside the network.
 */
export function httpsOnly() {
  return async (ctx: AppContext, next: Next) => {
    if (!ctx.secure && ctx.path !== '/health') throw new ForbiddenError('HTTPS is required');
    await next();
  };
}

/** Loopback-only listeners cannot be reached from another host, so plain HTTP is safe there. */
export function isLoopbackHost(host: string): boolean {
  return host === 'localhost' || host === '::1' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
