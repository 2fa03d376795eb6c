import type { IdempotencyCallMap } from './actor-calls.js';
import type { ActorContext } from './instance-actor.js';

/** Owned-state namespace of the Idempotency-Key records (fenced like every owned write). */
export const IDEMPOTENCY_NAMESPACE = 'idempotency';

/** How long a key is remembered (the convention of payment APIs). */
export const IDEMPOTENCY_TTL_MS = 24 * 60 * 60 * 1000;

/**
 * One key's record: `started` from the moment the request is let through until its answer is recorded
 * (`done`). A `started` record whose request was cut off (a crash, a timeout) stays so: its outcome is
 * unknown, and a retry must not send a second time.
 */
export interface IdempotencyRecord {
  fingerprint: string;
  state: 'started' | 'done';
  /** Epoch milliseconds of the first request. */
  at: number;
  status?: number;
  body?: unknown;
}

type Handlers = {
  [K in keyof IdempotencyCallMap]: (
    ctx: ActorContext,
    payload: IdempotencyCallMap[K]['payload'],
  ) => Promise<IdempotencyCallMap[K]['result']>;
};

/** The owner's side: records live in the instance's fenced owned state, so a new owner finds them. */
export function idempotencyHandlers(now: () => number = Date.now): Handlers {
  return {
    'idempotency.begin': async (ctx, { key, fingerprint }) => {
      const raw = await ctx.store.ownedState.get(ctx.instanceId, IDEMPOTENCY_NAMESPACE, key);
      const record = raw === undefined ? undefined : (JSON.parse(raw) as IdempotencyRecord);
      if (record && now() - record.at < IDEMPOTENCY_TTL_MS) {
        if (record.fingerprint !== fingerprint) return { outcome: 'reused' };
        if (record.state === 'done') return { outcome: 'replay', status: record.status!, body: record.body };
        return { outcome: 'in-progress' };
      }
      const started: IdempotencyRecord = { fingerprint, state: 'started', at: now() };
      await ctx.writeOwned([{ namespace: IDEMPOTENCY_NAMESPACE, key, value: JSON.stringify(started) }]);
      return { outcome: 'proceed' };
    },
    'idempotency.finish': async (ctx, { key, fingerprint, status, body }) => {
      const raw = await ctx.store.ownedState.get(ctx.instanceId, IDEMPOTENCY_NAMESPACE, key);
      const at = raw === undefined ? now() : (JSON.parse(raw) as IdempotencyRecord).at;
      const done: IdempotencyRecord = { fingerprint, state: 'done', at, status, body };
      await ctx.writeOwned([{ namespace: IDEMPOTENCY_NAMESPACE, key, value: JSON.stringify(done) }]);
      return { recorded: true };
    },
    'idempotency.abandon': async (ctx, { key }) => {
      await ctx.writeOwned([{ namespace: IDEMPOTENCY_NAMESPACE, key, value: null }]);
      return { forgotten: true };
    },
  };
}

/** Drops the records older than the TTL (run when an actor starts, so the namespace stays small). */
export async function pruneIdempotencyRecords(ctx: ActorContext, now: () => number = Date.now): Promise<void> {
  const all = await ctx.store.ownedState.list(ctx.instanceId, IDEMPOTENCY_NAMESPACE);
  const expired = [...all].filter(([, raw]) => now() - (JSON.parse(raw) as IdempotencyRecord).at >= IDEMPOTENCY_TTL_MS);
  if (expired.length > 0) {
    await ctx.writeOwned(expired.map(([key]) => ({ namespace: IDEMPOTENCY_NAMESPACE, key, value: null })));
  }
}
