import type { Next } from 'koa';
import { AppError, ErrorCode } from '../errors.js';
import type { AppContext } from './app-state.js';

/** The only place where an error's code becomes an HTTP status. */
const STATUS: Record<ErrorCode, number> = {
  [ErrorCode.InvalidInput]: 400,
  [ErrorCode.Unauthenticated]: 401,
  [ErrorCode.Forbidden]: 403,
  [ErrorCode.QuotaExceeded]: 403,
  [ErrorCode.NotFound]: 404,
  [ErrorCode.Conflict]: 409,
  [ErrorCode.IdempotencyKeyReused]: 422,
  [ErrorCode.PayloadTooLarge]: 413,
  [ErrorCode.RateLimited]: 429,
  [ErrorCode.Internal]: 500,
  [ErrorCode.Unavailable]: 503,
  [ErrorCode.Fenced]: 503,
  [ErrorCode.NotOwner]: 503,
  // Most endpoints answer 400; those the spec gives 503 rethrow it as UnavailableError.
  [ErrorCode.NotConnected]: 400,
  [ErrorCode.NetworkUnreachable]: 502,
  [ErrorCode.Timeout]: 504,
  [ErrorCode.MediaDownloadFailed]: 400,
  [ErrorCode.MediaValidationFailed]: 400,
  [ErrorCode.UnsupportedMediaType]: 400,
  [ErrorCode.MediaUploadFailed]: 500,
  [ErrorCode.AudioConversionFailed]: 500,
  [ErrorCode.SendFailed]: 500,
  [ErrorCode.Disconnected]: 503,
};

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
      sendError(ctx, STATUS[err.code], err.message, err.code);
      if (STATUS[err.code] >= 500) ctx.state.log.error({ err }, 'request failed');
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
