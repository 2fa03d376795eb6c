import { createHash } from 'node:crypto';
import { ValidationError } from '../errors.js';
import type { RequestKey } from '../cluster/actor-caller.js';
import type { AppContext } from './app-state.js';
import { bodyOf } from './json-body.js';

/** The header, as payment APIs made it standard. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY = /^[\x21-\x7e]{1,255}$/;

/** JSON with object keys sorted, so that the same body sent twice has the same fingerprint. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value !== null && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>).sort(([a], [b]) => (a < b ? -1 : 1));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/** What makes two requests the same request: method, path and body. */
function fingerprintOf(ctx: AppContext): string {
  return createHash('sha256')
    .update(`${ctx.method} ${ctx.path}\n${canonical(bodyOf(ctx))}`)
    .digest('base64url');
}

export type IdempotencyMiddleware = (ctx: AppContext, run: () => Promise<void>) => Promise<void>;

/**
 * `Idempotency-Key` on a POST with a network side effect (after the route's guard resolved the instance).
 * The key goes with each actor call the request makes (`actors.for(ctx)`), and the owner runs each such
 * call at most once, recording its outcome under its epoch in the same turn (actors/idempotency-records.ts):
 * a retry through any node, before or after a failover, gets the recorded answer
 * (`Idempotent-Replayed: true`) in one routed round trip. The same key with another request is 422; a key
 * whose call is still running (or was cut off with an unknown outcome) is 409.
 */
export function idempotency(): IdempotencyMiddleware {
  return async (ctx, run) => {
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (!key) return run();
    if (!KEY.test(key)) {
      throw new ValidationError(`Invalid ${IDEMPOTENCY_HEADER} header: 1 to 255 visible ASCII characters`);
    }
    const state: RequestKey = { key, fingerprint: fingerprintOf(ctx), calls: 0, replayed: false };
    ctx.state.idempotency = state;
    try {
      await run();
    } finally {
      if (state.replayed) ctx.set('Idempotent-Replayed', 'true');
    }
  };
}
