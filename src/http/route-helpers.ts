import type Router from '@koa/router';
import type { z } from 'zod';
import { NOT_CONNECTED_MESSAGE, NotConnectedError, UnavailableError, ValidationError, isNotConnected } from '../errors.js';
import type { InstanceRecord } from '../store/records.js';
import { describeIssue, isPlainObject } from '../validation.js';
import type { AppContext, AppState } from './app-state.js';
import { requireAccountOrInstance } from './auth.js';
import type { Authenticator } from './auth.js';
import { bodyOf } from './json-body.js';

/** The body, which must be a JSON object, parsed with `schema`; a refusal names the first problem. */
export function parseBody<T extends z.ZodType>(ctx: AppContext, schema: T): z.infer<T> {
  const raw = bodyOf(ctx);
  if (!isPlainObject(raw)) throw new ValidationError('Invalid request body: expected a JSON object');
  const parsed = schema.safeParse(raw);
  if (!parsed.success) throw new ValidationError(`Invalid request body: ${describeIssue(parsed.error)}`);
  return parsed.data;
}

/** `5511…`, `+55 11 …` or a full JID (user, group, LID) → the JID. */
export function toRecipient(raw: string): string {
  if (raw.includes('@')) {
    if (!/^[\d-]{6,40}@(s\.whatsapp\.net|g\.us|lid)$/.test(raw)) throw new ValidationError('Invalid number');
    return raw;
  }
  const digits = raw.replace(/[\s+()-]/g, '');
  if (!/^\d{6,20}$/.test(digits)) throw new ValidationError('Invalid number');
  return `${digits}@s.whatsapp.net`;
}

/** A chat address as the delete and history endpoints take it: a number, a JID, or `status@broadcast`. */
export function chatAddress(raw: string): string {
  return raw === 'status@broadcast' || raw === 'status' ? 'status@broadcast' : toRecipient(raw);
}

/** A boolean query parameter: `true`/`1` or `false`/`0`, absent or empty = `fallback`. */
export function queryFlag(ctx: AppContext, name: string, fallback: boolean): boolean {
  const raw = ctx.query[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim().toLowerCase();
  if (value === undefined || value === '') return fallback;
  if (value === 'true' || value === '1') return true;
  if (value === 'false' || value === '0') return false;
  throw new ValidationError(`${name} must be true or false`);
}

/** A string query parameter, trimmed; undefined when absent or empty. */
export function queryString(ctx: AppContext, name: string): string | undefined {
  const raw = ctx.query[name];
  const value = (Array.isArray(raw) ? raw[0] : raw)?.trim();
  return value ? value : undefined;
}

/**
 * The edge's early check, from the state the owner stored, so that a disconnected instance is refused
 * before a download or a conversion; the owner checks again when it runs the call.
 */
export function assertConnected(instance: InstanceRecord): void {
  if (instance.connection.state !== 'connected') throw new NotConnectedError();
}

/** For endpoints whose spec status for "not connected" is 503. */
export async function unavailableWhenDisconnected<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    if (isNotConnected(err)) throw new UnavailableError(NOT_CONNECTED_MESSAGE, { cause: err });
    throw err;
  }
}

/**
 * `<path>` and `<path>/` without an instance name: the caller is authenticated (401 as usual), then told
 * `Instance name is required` instead of a bare 404.
 */
export function nameRequired(router: Router<AppState>, method: 'get' | 'post', path: string, auth: Authenticator): void {
  const refuse = () => {
    throw new ValidationError('Instance name is required');
  };
  router[method]([path, `${path}/`], requireAccountOrInstance(auth), refuse);
}
