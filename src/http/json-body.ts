import type { Next } from 'koa';
import { koaBody } from 'koa-body';
import { PayloadTooLargeError, ValidationError } from '../errors.js';
import type { AppContext } from './app-state.js';

/** How an endpoint words a refused body: most say `Invalid request body: <detail>`, some a fixed text. */
export type InvalidBodyMessage = (detail: string) => string;

export const detailedInvalidBody: InvalidBodyMessage = (detail) => `Invalid request body: ${detail}`;
export const plainInvalidBody: InvalidBodyMessage = () => 'Invalid request body';

/** What a JSON body may be sent as. */
const JSON_TYPES = ['application/json', '+json'];

/** The Content-Type nearly every client sends, recognised without parsing it (`ctx.is` is the general case). */
const PLAIN_JSON = /^application\/json(?:\s*;\s*charset=(?:utf-8|"utf-8"))?$/i;

/**
 * Parses a JSON body (strict: an object or array at the top) up to `limitBytes`. A body that is not
 * JSON, or is malformed, is refused with the endpoint's own wording; an oversized one with 413.
 */
export function jsonBody(limitBytes: number, invalid: InvalidBodyMessage = detailedInvalidBody) {
  const parse = koaBody({
    json: true,
    jsonStrict: true,
    jsonLimit: limitBytes,
    // The types the check below lets through: koa-body's own list would leave other `+json` bodies unread.
    jsonTypes: JSON_TYPES,
    multipart: false,
    urlencoded: false,
    text: false,
    parsedMethods: ['POST', 'PUT', 'PATCH', 'DELETE'] as never,
  });
  return async (ctx: AppContext, next: Next) => {
    const hasBody = (ctx.request.length ?? 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (hasBody && !PLAIN_JSON.test(ctx.get('content-type')) && !ctx.is(JSON_TYPES)) {
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
