import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import type { DeclaredRoute, ResponseSpec } from '../api-router.js';
import type { Access } from '../auth.js';

/**
 * The OpenAPI 3.1 document of every declared route (`ApiRouter`), generated from the same zod schemas
 * that validate the requests; nothing here is written by hand but the words about tokens and errors.
 */

export type JsonSchema = Record<string, unknown>;

interface Operation {
  operationId: string;
  tags: string[];
  summary: string;
  description?: string;
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  tags: { name: string }[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
}

/** The package's version (package.json sits three levels up from both src/ and dist/ builds of this file). */
export function packageVersion(): string {
  try {
    const file = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'package.json');
    return (JSON.parse(readFileSync(file, 'utf8')) as { version?: string }).version ?? '0.0.0';
  } catch {
    return '0.0.0';
  }
}

const ACCESS: Record<Access, { text: string; query: boolean }> = {
  global: { text: 'the global token (ADMIN_TOKEN), in a header', query: false },
  metrics: { text: 'METRICS_TOKEN or the global token, in a header', query: false },
  account: { text: 'a TokenAccount', query: true },
  'account-or-instance': { text: 'a TokenAccount or a TokenInstance', query: true },
  instance: { text: "a TokenAccount owning the instance, or the instance's TokenInstance", query: true },
  'instance-account': { text: 'a TokenAccount owning the instance', query: true },
  'account-scope': { text: 'a TokenAccount, or the global token with ?account=<name>', query: true },
};

const SCHEMAS: Record<string, JsonSchema> = {
  Success: {
    type: 'object',
    properties: { success: { const: true }, message: { type: 'string' } },
    required: ['success'],
    additionalProperties: true,
  },
  Error: {
    type: 'object',
    properties: {
      success: { const: false },
      error: {
        type: 'object',
        properties: {
          message: { type: 'string' },
          code: { type: 'string', description: 'Stable error code, e.g. invalid_input, not_owner' },
        },
        required: ['message'],
      },
    },
    required: ['success', 'error'],
  },
};

const SECURITY_SCHEMES: Record<string, JsonSchema> = {
  tokenHeader: { type: 'apiKey', in: 'header', name: 'token' },
  bearer: { type: 'http', scheme: 'bearer' },
  tokenQuery: { type: 'apiKey', in: 'query', name: 'token' },
};

/** A zod schema as JSON Schema 2020-12 (what OpenAPI 3.1 embeds), as clients send it. */
export function jsonSchema(schema: z.ZodType): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
  }) as JsonSchema;
  return rest;
}

/** Koa's `/a/:instance/` → OpenAPI's `/a/{instance}`; a trailing slash is the same route. */
export function openApiPath(koaPath: string): string {
  const trimmed = koaPath.length > 1 ? koaPath.replace(/\/+$/, '') : koaPath;
  return trimmed.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

function operationId(method: string, path: string): string {
  const words = path.split(/[^A-Za-z0-9]+/).filter(Boolean);
  return [method, ...words.map((w) => w[0]!.toUpperCase() + w.slice(1))].join('');
}

function parameters(route: DeclaredRoute): JsonSchema[] {
  const params: JsonSchema[] = [];
  for (const [, name] of route.fullPath.matchAll(/:([A-Za-z0-9_]+)/g)) {
    params.push({
      name,
      in: 'path',
      required: true,
      schema: { type: 'string' },
      ...(name === 'instance' ? { description: 'Instance name' } : {}),
    });
  }
  if (route.spec.query) {
    const schema = jsonSchema(route.spec.query);
    const required = new Set((schema.required as string[] | undefined) ?? []);
    for (const [name, prop] of Object.entries((schema.properties as Record<string, JsonSchema> | undefined) ?? {})) {
      const { description, ...rest } = prop;
      params.push({
        name,
        in: 'query',
        required: required.has(name),
        schema: rest,
        ...(description ? { description } : {}),
      });
    }
  }
  if (route.spec.idempotency) {
    params.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      schema: { type: 'string', minLength: 1, maxLength: 255 },
      description:
        'Sent again with the same request (through any node, within 24 h), replays the first answer with ' +
        '`Idempotent-Replayed: true` instead of acting twice; with another request: 422; while the first ' +
        'is still running, or was cut off with an unknown outcome: 409.',
    });
  }
  if (route.spec.auth !== 'public' && route.spec.auth.access === 'account-scope') {
    params.push({
      name: 'account',
      in: 'query',
      required: false,
      schema: { type: 'string' },
      description: 'The account, with the global token',
    });
  }
  return params;
}

function response(status: number, spec: string | ResponseSpec): JsonSchema {
  const r = typeof spec === 'string' ? { description: spec } : spec;
  const contentType = r.contentType ?? 'application/json';
  const schema = r.schema
    ? jsonSchema(r.schema)
    : contentType === 'application/json'
      ? { $ref: `#/components/schemas/${status < 400 ? 'Success' : 'Error'}` }
      : { type: 'string' };
  return { description: r.description, content: { [contentType]: { schema } } };
}

function operation(route: DeclaredRoute): Operation {
  const { spec } = route;
  const access = spec.auth === 'public' ? undefined : ACCESS[spec.auth.access];
  const responses: Record<string, JsonSchema> = {};
  for (const [status, r] of Object.entries(spec.responses)) responses[status] = response(Number(status), r);
  const add = (status: number, description: string) => (responses[status] ??= response(status, description));
  if (spec.body || spec.rawBody || spec.query) add(400, 'Invalid request: the message names the first problem');
  if (access) {
    add(401, 'Missing or invalid token');
    add(403, 'The token may not do this');
    add(429, 'Rate limit exceeded (X-RateLimit-* headers)');
  }
  if (spec.auth !== 'public' && (spec.auth.access === 'instance' || spec.auth.access === 'instance-account')) {
    add(404, 'Instance not found');
  }
  const body = spec.body ?? spec.rawBody;
  let requestBody: JsonSchema | undefined;
  if (body) {
    const schema = jsonSchema(body);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    requestBody = { required, content: { 'application/json': { schema } } };
  }
  const params = parameters(route);
  const description = [spec.description, access ? `Token: ${access.text}.` : 'No token.'].filter(Boolean).join('\n\n');
  return {
    operationId: operationId(spec.method, route.fullPath),
    tags: [route.tag],
    summary: spec.summary,
    description,
    ...(params.length ? { parameters: params } : {}),
    ...(requestBody ? { requestBody } : {}),
    responses,
    security: access ? [{ tokenHeader: [] }, { bearer: [] }, ...(access.query ? [{ tokenQuery: [] }] : [])] : [],
  };
}

/** The document of these routes (one operation per method and path; a trailing-slash twin is the same). */
export function openApiDocument(routes: readonly DeclaredRoute[]): OpenApiDocument {
  const paths: OpenApiDocument['paths'] = {};
  const tags: string[] = [];
  const ids = new Set<string>();
  for (const route of routes) {
    const path = openApiPath(route.fullPath);
    const item = (paths[path] ??= {});
    if (item[route.spec.method]) continue;
    const op = operation(route);
    // Two spellings of one path (`reset-link`, `resetLink`) make one id: the later gets a suffix.
    for (let n = 2; ids.has(op.operationId); n++) {
      op.operationId = `${operationId(route.spec.method, route.fullPath)}${n}`;
    }
    ids.add(op.operationId);
    item[route.spec.method] = op;
    if (!tags.includes(route.tag)) tags.push(route.tag);
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Switchboard',
      version: packageVersion(),
      description:
        'Self-hosted WhatsApp instances. Every answer is a JSON envelope: `{success: true, message, …}` or ' +
        '`{success: false, error: {message, code}}`. Tokens go in the `token` header or as `Authorization: Bearer`; ' +
        '`?token=` is read only on WebSocket upgrades (never the global token). Events stream over ' +
        '`GET /ws/:instance` (a WebSocket upgrade, not listed here).',
    },
    tags: tags.map((name) => ({ name })),
    paths,
    components: { schemas: SCHEMAS, securitySchemes: SECURITY_SCHEMES },
  };
}
