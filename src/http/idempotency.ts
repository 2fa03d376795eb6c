import { createHash } from 'node:crypto';
import { AppError, ConflictError, ErrorCode, IdempotencyKeyReusedError, ValidationError } from '../errors.js';
import type { ActorCaller } from '../cluster/actor-caller.js';
import type { AppContext } from './app-state.js';
import { bodyOf } from './json-body.js';

/** The header, as payment APIs made it standard. */
export const IDEMPOTENCY_HEADER = 'Idempotency-Key';
const KEY = /^[\x21-\x7e]{1,255}$/;

/**
 * Errors after which the request surely did nothing on the network: its key is forgotten, so that the
 * client may send it again. Any other failure (a timeout, an internal or send failure, a lost ownership)
 * may have happened after the send: the key stays started and a retry gets 409 rather than a second send.
 */
const NOTHING_HAPPENED = new Set<string>([
  ErrorCode.InvalidInput,
  ErrorCode.Unauthenticated,
  ErrorCode.Forbidden,
  ErrorCode.NotFound,
  ErrorCode.Conflict,
  ErrorCode.QuotaExceeded,
  ErrorCode.RateLimited,
  ErrorCode.PayloadTooLarge,
  ErrorCode.Unavailable,
  ErrorCode.NotOwner,
  ErrorCode.NotConnected,
  ErrorCode.Disconnected,
  ErrorCode.MediaDownloadFailed,
  ErrorCode.MediaValidationFailed,
  ErrorCode.UnsupportedMediaType,
  ErrorCode.AudioConversionFailed,
]);

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
 * `Idempotency-Key` on a POST with a network side effect (after the route's guard resolved the instance):
 * the instance's owner records key → answer in fenced owned state for 24 h, so a retry through any node,
 * before or after a failover, replays the answer (`Idempotent-Replayed: true`) instead of sending again.
 * The same key with another request is 422; a key whose request is still running (or was cut off with
 * an unknown outcome) is 409.
 */
export function idempotency(actors: ActorCaller): IdempotencyMiddleware {
  return async (ctx, run) => {
    const key = ctx.get(IDEMPOTENCY_HEADER);
    if (!key) return run();
    if (!KEY.test(key)) {
      throw new ValidationError(`Invalid ${IDEMPOTENCY_HEADER} header: 1 to 255 visible ASCII characters`);
    }
    const instanceId = ctx.state.instance!.id;
    const fingerprint = fingerprintOf(ctx);
    const begun = await actors.for(ctx).call(instanceId, 'idempotency.begin', { key, fingerprint });
    if (begun.outcome === 'reused') throw new IdempotencyKeyReusedError();
    if (begun.outcome === 'in-progress') {
      throw new ConflictError(
        'A request with this Idempotency-Key is still running, or was cut off with an unknown outcome',
      );
    }
    if (begun.outcome === 'replay') {
      ctx.status = begun.status;
      ctx.body = begun.body;
      ctx.set('Idempotent-Replayed', 'true');
      return;
    }
    try {
      await run();
    } catch (err) {
      if (err instanceof AppError && NOTHING_HAPPENED.has(err.code)) {
        await actors
          .for(ctx)
          .call(instanceId, 'idempotency.abandon', { key })
          .catch((e: unknown) => ctx.state.log.warn({ err: e }, 'could not forget an idempotency key'));
      }
      throw err;
    }
    await actors
      .for(ctx)
      .call(instanceId, 'idempotency.finish', { key, fingerprint, status: ctx.status, body: ctx.body });
  };
}
