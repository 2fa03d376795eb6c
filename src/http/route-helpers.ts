import { DisconnectedError, NotConnectedError, ValidationError, isNotConnected } from '../errors.js';
import { requireAddress } from '../msgnet/jid.js';
import type { InstanceRecord } from '../store/records.js';
import type { AppContext } from './app-state.js';
import type { ApiRouter } from './api-router.js';
import { requireAccountOrInstance } from './auth.js';
import type { Authenticator } from './auth.js';

/** The caller's account (and instance, for a TokenInstance) on a route whose guard refused the global token. */
export function principalAccount(ctx: AppContext) {
  const p = ctx.state.principal;
  if (!p || p.kind === 'global') throw new Error('route reached without an account principal');
  return p;
}

/** `5511…`, `+55 11 …` or a full JID (user, group, LID) → the JID; else 400 naming `field` (msgnet/jid.ts). */
export function toRecipient(raw: string, field = 'number'): string {
  return requireAddress(raw, field);
}

/** A chat address as the delete and history endpoints take it: a number, a JID, or `status@broadcast`. */
export function chatAddress(raw: string, field = 'chat'): string {
  return raw === 'status@broadcast' || raw === 'status' ? 'status@broadcast' : requireAddress(raw, field);
}

/**
 * How an endpoint answers "not connected": 400 `not_connected` (spec 7's rows for groups, profile and
 * privacy, and every endpoint it gives no row), or 503 `disconnected` for the two whose rows say so (the
 * status post, chats by label with a refresh), through `assertConnected` and `disconnectedWhenNotConnected`.
 */
export type NotConnectedAnswer = 'not_connected' | 'disconnected';

/**
 * The edge's early check, from the state the owner stored, so that a disconnected instance is refused
 * before a download or a conversion; the owner checks again when it runs the call.
 */
export function assertConnected(instance: InstanceRecord, answer: NotConnectedAnswer = 'not_connected'): void {
  if (instance.connection.state === 'connected') return;
  throw answer === 'disconnected' ? new DisconnectedError() : new NotConnectedError();
}

/** For the endpoints whose spec answers "not connected" with 503: the owner's refusal as `disconnected`. */
export async function disconnectedWhenNotConnected<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (err) {
    throw isNotConnected(err) ? new DisconnectedError() : err;
  }
}

/**
 * `<path>` and `<path>/` without an instance name: the caller is authenticated (401 as usual), then told
 * `Instance name is required` instead of a bare 404.
 */
export function nameRequired(
  api: ApiRouter,
  method: 'get' | 'post' | 'delete',
  path: string,
  auth: Authenticator,
): void {
  for (const variant of [path, `${path}/`]) {
    api.route(
      {
        method,
        path: variant,
        summary: `${path.slice(1)} without an instance name (refused)`,
        auth: requireAccountOrInstance(auth),
        responses: { 400: 'Instance name is required' },
      },
      () => {
        throw new ValidationError('Instance name is required');
      },
    );
  }
}
