import {
  AppError,
  ConflictError,
  ERROR_CODES,
  ErrorCode,
  IdempotencyKeyReusedError,
  errorFromWire,
} from '../errors.js';
import type { IdempotencyTag } from './actor-calls.js';
import type { ActorContext } from './actor-context.js';

/** Owned-state namespace of the Idempotency-Key records (fenced like every owned write). */
export const IDEMPOTENCY_NAMESPACE = 'idempotency';

/** How long a key is remembered (the convention of payment APIs). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * One keyed call's record: `started` from the moment the call runs until its outcome is recorded
 * (`done`, with the result or the error a retry gets). A `started` record whose call was cut off (a crash,
 * a lost ownership) stays so: its outcome is unknown, and a retry must not run it a second time.
 */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'started' | 'done';
  /** Epoch milliseconds of the first request. */
  at: number;
  result?: unknown;
  error?: { code: string; message: string };
}

/** What a keyed call came to: its result, and whether it was recorded earlier rather than run now. */
export interface IdempotentOutcome<T> {
  result: T;
  replayed: boolean;
}

/**
 * Runs a keyed call at most once, inside the owner's turn: the record is read, `started` is written under
 * the owner's epoch before `run`, and its outcome after it, so a retry through any node, before or after a
 * failover, gets the recorded answer. A failure that surely did nothing (ERROR_CODES `forget`) forgets the
 * record instead, so the retry runs it.
 */
export async function runIdempotent<T>(
  ctx: ActorContext,
  tag: IdempotencyTag,
  run: () => Promise<T>,
  now: () => number = Date.now,
): Promise<IdempotentOutcome<T>> {
  const raw = await ctx.store.ownedState.get(ctx.instanceId, IDEMPOTENCY_NAMESPACE, tag.key);
  const record = raw === undefined ? undefined : (JSON.parse(raw) as IdempotencyRecord);
  if (record && now() - record.at < IDEMPOTENCY_TTL_MS) {
    if (record.fingerprint !== tag.fingerprint) throw new IdempotencyKeyReusedError();
    if (record.state === 'started') {
      throw new ConflictError(
        'A request with this Idempotency-Key is still running, or was cut off with an unknown outcome',
      );
    }
    if (record.error) throw errorFromWire(record.error.code, record.error.message, ctx.instanceId);
    return { result: record.result as T, replayed: true };
  }
  const at = now();
  const write = (value: IdempotencyRecord | null) =>
    ctx.writeOwned([
      { namespace: IDEMPOTENCY_NAMESPACE, key: tag.key, value: value === null ? null : JSON.stringify(value) },
    ]);
  await write({ fingerprint: tag.fingerprint, state: 'started', at });
  let result: T;
  try {
    result = await run();
  } catch (err) {
    const code = err instanceof AppError ? err.code : ErrorCode.Internal;
    const message = err instanceof AppError ? err.message : 'Internal server error';
    // Not recorded (the store away, ownership gone): the record stays `started`, and a retry gets 409.
    await write(
      ERROR_CODES[code].idempotency === 'forget'
        ? null
        : { fingerprint: tag.fingerprint, state: 'done', at, error: { code, message } },
    ).catch((e: unknown) => ctx.log.warn({ err: e, key: tag.key }, "could not record a keyed call's failure"));
    throw err;
  }
  await write({ fingerprint: tag.fingerprint, state: 'done', at, result });
  return { result, replayed: false };
}

/** Drops the records older than the TTL (run when an actor starts, so the namespace stays small). */
export async function pruneIdempotencyRecords(ctx: ActorContext, now: () => number = Date.now): Promise<void> {
  const all = await ctx.store.ownedState.list(ctx.instanceId, IDEMPOTENCY_NAMESPACE);
  const expired = [...all].filter(([, raw]) => now() - (JSON.parse(raw) as IdempotencyRecord).at >= IDEMPOTENCY_TTL_MS);
  if (expired.length > 0) {
    await ctx.writeOwned(expired.map(([key]) => ({ namespace: IDEMPOTENCY_NAMESPACE, key, value: null })));
  }
}
