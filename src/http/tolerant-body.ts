import type { z } from 'zod';
import { isPlainObject } from '../validation.js';
import type { AppContext } from './app-state.js';
import { bodyOf } from './json-body.js';

/** The response header naming the top-level body fields that were ignored. */
export const IGNORED_FIELDS_HEADER = 'X-Ignored-Fields';

/** A header-safe field name is named as sent; any other is percent-encoded, and the list is capped. */
const PLAIN_NAME = /^[A-Za-z0-9_.$-]{1,64}$/;
const MAX_NAMED = 20;

/**
 * Which top-level fields a strict object schema takes, plus the spellings the route's service maps
 * (`aliases`); undefined for a schema that takes any field (a loose or non-object one: nothing is dropped).
 */
export function acceptedFields(
  schema: z.ZodType | undefined,
  aliases?: (field: string) => boolean,
): ((field: string) => boolean) | undefined {
  const def = (schema as { _zod?: { def?: { catchall?: { _zod?: { def?: { type?: string } } } } } } | undefined)?._zod
    ?.def;
  const shape = (schema as { shape?: Record<string, unknown> } | undefined)?.shape;
  if (!shape || def?.catchall?._zod?.def?.type !== 'never') return undefined;
  return (field) => Object.hasOwn(shape, field) || (aliases?.(field) ?? false);
}

/**
 * The tolerant reader: a top-level field the route does not know is dropped before validation (known
 * fields stay strictly checked) and named in `X-Ignored-Fields`, as clients of the hosted product send
 * fields of their own (`linkPreview`, tracking ids…) that must not turn a send into a 400.
 */
export function dropUnknownFields(ctx: AppContext, accepts: (field: string) => boolean): void {
  const raw = bodyOf(ctx);
  if (!isPlainObject(raw)) return;
  const ignored = Object.keys(raw).filter((k) => !accepts(k));
  if (ignored.length === 0) return;
  const named = ignored.slice(0, MAX_NAMED).map((k) => (PLAIN_NAME.test(k) ? k : encodeURIComponent(k).slice(0, 64)));
  ctx.set(IGNORED_FIELDS_HEADER, named.join(',') + (ignored.length > MAX_NAMED ? ',...' : ''));
  (ctx.request as { body?: unknown }).body = Object.fromEntries(Object.entries(raw).filter(([k]) => accepts(k)));
}
