import Router from '@koa/router';
import type { RouterContext } from '@koa/router';
import type { Next } from 'koa';
import { z } from 'zod';
import { ValidationError } from '../errors.js';
import { describeIssue, isPlainObject } from '../validation.js';
import type { AppState } from './app-state.js';
import { chained } from './chained.js';
import type { Guard } from './auth.js';
import type { IdempotencyMiddleware } from './idempotency.js';
import { bodyOf, detailedInvalidBody, jsonBody } from './json-body.js';
import { acceptedFields, dropUnknownFields } from './tolerant-body.js';
import type { InvalidBodyMessage } from './json-body.js';

/**
 * One declaration per endpoint, used twice: to validate the request before the handler runs, and to
 * generate the OpenAPI document (`http/openapi/openapi-document.ts`). A route's body and query schemas
 * are the zod schemas that validate them, so the document cannot drift from the code.
 *
 *   api.route(
 *     { method: 'post', path: '/text/:instance', summary: 'Send a text message', auth: guard,
 *       body: textBody, responses: { 200: 'Message sent' } },
 *     async (ctx, { body }) => { ... },
 *   );
 */

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export type RouteContext = RouterContext<AppState>;
export type RouteMiddleware = (ctx: RouteContext, next: Next) => Promise<void> | void;

export interface ResponseSpec {
  description: string;
  /** The response body's schema, when worth documenting beyond the `{success, message}` envelope. */
  schema?: z.ZodType;
  /** @default application/json */
  contentType?: string;
}

/** Schemas are zod objects so that their fields become named body fields and query parameters. */
export type ObjectSchema = z.ZodType<Record<string, unknown>, Record<string, unknown>>;

export interface RouteSpec<B extends ObjectSchema | undefined, Q extends ObjectSchema | undefined> {
  method: HttpMethod;
  /** Relative to the router's prefix, in Koa's syntax (`/text/:instance`). */
  path: string;
  summary: string;
  description?: string;
  /** Who may call (a guard from `auth.ts`, which also names the access for the document), or 'public'. */
  auth: Guard | 'public';
  /**
   * The JSON body, validated here: a refusal is 400 `Invalid request body: <first problem>` (worded by
   * `invalidBody`) and the handler gets the parsed value as `input.body`.
   */
  body?: B;
  /**
   * A JSON body validated by the service the handler passes it to, with its own wording, against this
   * very schema (export it from the service): documented from it, parsed as JSON here, given raw.
   */
  rawBody?: ObjectSchema;
  /**
   * Other top-level spellings the route's service maps to the schema's fields (the hosted product's
   * aliases). A top-level field that is neither is ignored and named in `X-Ignored-Fields`.
   */
  aliases?: (field: string) => boolean;
  /** How a refused body is worded. @default `Invalid request body: <detail>` */
  invalidBody?: InvalidBodyMessage;
  /** Query parameters (first value of a repeated one), validated here; see `queryParam` for the helpers. */
  query?: Q;
  /** Status → description (or more). Errors common to the access (401, 403, 404, 429) are added by the document. */
  responses: Record<number, string | ResponseSpec>;
  /**
   * `Idempotency-Key` support (http/idempotency.ts), for a POST with a network side effect on the path's
   * instance: wraps the handler once the guard and the body checks have passed.
   */
  idempotency?: IdempotencyMiddleware;
}

type Out<S, Fallback> = S extends z.ZodType ? z.output<S> : Fallback;

export interface RouteInput<B, Q> {
  /** The parsed body (`body`), the raw JSON (`rawBody`), or undefined. */
  body: Out<B, unknown>;
  query: Out<Q, Record<string, never>>;
}

export type RouteHandler<B, Q> = (ctx: RouteContext, input: RouteInput<B, Q>) => Promise<void> | void;

/** A route as the document sees it: the spec with the full path. */
export interface DeclaredRoute {
  tag: string;
  fullPath: string;
  spec: RouteSpec<ObjectSchema | undefined, ObjectSchema | undefined>;
}

export interface ApiRouterOptions {
  /** Path prefix of every route, e.g. `/api/message`. */
  prefix?: string;
  /** The group the routes are listed under in the document. */
  tag: string;
  /** Largest JSON body (routes with a body). */
  maxBodyBytes?: number;
}

/** The first value of each query parameter, so that schemas see plain strings. */
function firstValues(query: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(query)) {
    const first = Array.isArray(value) ? value[0] : value;
    if (first !== undefined) out[key] = first;
  }
  return out;
}

/** A query refusal: the schema's own sentence (the helpers below write them), else the field and the problem. */
function queryProblem(error: z.ZodError): string {
  const issue = error.issues[0];
  if (issue && issue.code === 'custom') return issue.message;
  return `Invalid query: ${describeIssue(error)}`;
}

/** A Koa router whose routes are declared with `RouteSpec`s (see the top of this file). */
export class ApiRouter {
  readonly koa: Router<AppState>;
  readonly routes: DeclaredRoute[] = [];

  constructor(private readonly options: ApiRouterOptions) {
    this.koa = new Router<AppState>(options.prefix ? { prefix: options.prefix } : {});
  }

  /** The path prefix every route of this router is under ('' when its routes are absolute). */
  get prefix(): string {
    return this.options.prefix ?? '';
  }

  /**
   * The first path segments (lower case) its routes can match, or undefined when a route starts with a
   * parameter: a request whose first segment is not among them cannot match any route here.
   */
  get heads(): ReadonlySet<string> | undefined {
    const heads = new Set<string>();
    for (const { fullPath } of this.routes) {
      const head = fullPath.split('/')[1] ?? '';
      // A parameter, wildcard or optional part (path-to-regexp's `:`, `*`, `{}`) can match any segment.
      if (/[:*{}()?]/.test(head)) return undefined;
      heads.add(head.toLowerCase());
    }
    return heads;
  }

  route<B extends ObjectSchema | undefined = undefined, Q extends ObjectSchema | undefined = undefined>(
    spec: RouteSpec<B, Q>,
    handler: RouteHandler<B, Q>,
  ): void {
    if (spec.body && spec.rawBody) throw new Error(`${spec.method} ${spec.path}: declare body or rawBody, not both`);
    const chain: RouteMiddleware[] = [];
    if (spec.auth !== 'public') chain.push(spec.auth);
    const invalid = spec.invalidBody ?? detailedInvalidBody;
    if (spec.body || spec.rawBody) {
      if (this.options.maxBodyBytes === undefined) {
        throw new Error(`${spec.method} ${spec.path}: the router has no maxBodyBytes`);
      }
      chain.push(jsonBody(this.options.maxBodyBytes, invalid));
    }
    const { body, query } = spec;
    const accepts = acceptedFields(body ?? spec.rawBody, spec.aliases);
    chain.push(async (ctx) => {
      if (accepts) dropUnknownFields(ctx, accepts);
      let parsedQuery: unknown = {};
      if (query) {
        const parsed = query.safeParse(firstValues(ctx.query));
        if (!parsed.success) throw new ValidationError(queryProblem(parsed.error));
        parsedQuery = parsed.data;
      }
      let parsedBody: unknown = spec.rawBody ? bodyOf(ctx) : undefined;
      if (body) {
        const raw = bodyOf(ctx);
        if (!isPlainObject(raw)) throw new ValidationError(invalid('expected a JSON object'));
        const parsed = body.safeParse(raw);
        if (!parsed.success) throw new ValidationError(invalid(describeIssue(parsed.error)));
        parsedBody = parsed.data;
      }
      const input = { body: parsedBody, query: parsedQuery } as RouteInput<B, Q>;
      if (spec.idempotency) await spec.idempotency(ctx, async () => handler(ctx, input));
      else await handler(ctx, input);
    });
    // One middleware: @koa/router composes a route's middleware anew on every request it matches.
    this.koa[spec.method](spec.path, chained(chain));
    const fullPath = `${this.options.prefix ?? ''}${spec.path === '/' ? '' : spec.path}` || '/';
    this.routes.push({ tag: this.options.tag, fullPath, spec });
  }
}

const trimmed = (v: string | undefined) => (v === undefined || v.trim() === '' ? undefined : v.trim());

/** Query parameter schemas with the service's wording for a refusal; every one is optional. */
export const queryParam = {
  /** A string, trimmed; absent or empty = undefined. */
  text: (description: string) => z.string().optional().transform(trimmed).describe(description),
  /** `true`/`1` or `false`/`0` (any case); absent or empty = undefined; anything else: `<name> must be true or false`. */
  flag: (name: string, description: string) =>
    z
      .string()
      .optional()
      .transform((raw, ctx) => {
        const v = trimmed(raw)?.toLowerCase();
        if (v === undefined) return undefined;
        if (v === 'true' || v === '1') return true;
        if (v === 'false' || v === '0') return false;
        ctx.addIssue({ code: 'custom', message: `${name} must be true or false` });
        return z.NEVER;
      })
      .describe(`${description} (true or false)`),
};
