import type { Next } from 'koa';
import { koaBody } from 'koa-body';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import type { AppContext } from './app-state.js';

/** How an endpoint words a refused body: most say `Invalid request body: <detail>`, some a fixed text. */
export type InvalidBodyMessage = (detail: string) => string;

export const detailedInvalidBody: InvalidBodyMessage = (detail) => `Invalid request body: ${detail}`;
export const plainInvalidBody: InvalidBodyMessage = () => 'Invalid request body';

/**
 * Parses a JSON body (strict: an object or array at the top) up to `limitBytes`. A body that is not
 * JSON, or is malformed, is refused with the endpoint's own wording; an oversized one with 413.
 */
export function jsonBody(limitBytes: number, invalid: InvalidBodyMessage = detailedInvalidBody) {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  });
  return async (ctx: AppContext, next: Next) => {
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !ctx.is('application/json', '+json')) {
      throw new ValidationError(invalid('Content-Type must be application/json'));
    }
    try {
      await parse(ctx, async () => {});
    } catch (err) {
      if ((err as { status?: number }).status === 413) throw new PayloadTooLargeError();
      throw new ValidationError(invalid('malformed JSON'), { cause: err });
    }
    await next();
  };
}

/** The parsed body, or `{}` when the request had none. */
export function bodyOf(ctx: AppContext): unknown {
  return (ctx.request as { body?: unknown }).body ?? {};
}
