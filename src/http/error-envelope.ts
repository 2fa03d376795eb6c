import type { Next } from 'koa';
import { AppError, ERROR_CODES, ErrorCode } from '../errors.js';
import type { AppContext } from './app-state.js';

/** Statuses that Koa's own middleware (body parsing) raises, with the message a client gets. */
const HTTP_ERRORS: Record<number, [ErrorCode, string]> = {
  400: [ErrorCode.InvalidInput, 'Invalid request body: malformed JSON'],
  413: [ErrorCode.PayloadTooLarge, 'Request body too large'],
  415: [ErrorCode.InvalidInput, 'Invalid request body: Content-Type must be application/json'],
};

export function sendError(ctx: AppContext, status: number, message: string, code?: string): void {
  ctx.status = status;
  ctx.body = { success: false, error: { message, ...(code ? { code } : {}) } };
}

/** Turns every thrown error into the spec's error envelope; only unexpected ones are logged as errors. */
export async function errorEnvelope(ctx: AppContext, next: Next): Promise<void> {
  try {
    await next();
    if (ctx.status === 404 && ctx.body === undefined) sendError(ctx, 404, 'Not found', ErrorCode.NotFound);
    if (ctx.status === 405 && ctx.method !== 'OPTIONS') sendError(ctx, 405, 'Method not allowed');
  } catch (err) {
    if (err instanceof AppError) {
      // The only place where an error's code becomes an HTTP status (its row of ERROR_CODES).
      const { status } = ERROR_CODES[err.code];
      sendError(ctx, status, err.message, err.code);
      if (status >= 500) ctx.state.log.error({ err }, 'request failed');
      return;
    }
    const status = (err as { status?: number }).status;
    const known = status === undefined ? undefined : HTTP_ERRORS[status];
    if (known) {
      sendError(ctx, status!, known[1], known[0]);
      return;
    }
    ctx.state.log.error({ err }, 'unexpected error');
    sendError(ctx, 500, 'Internal server error', ErrorCode.Internal);
  }
}
