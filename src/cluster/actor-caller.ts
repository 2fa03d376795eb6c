import type { ActorCallKind, ActorPayload, ActorResult } from '../actors/actor-calls.js';
import type { KeyedCall } from '../actors/instance-actor.js';
import type { Router } from './router.js';

/**
 * A request's Idempotency-Key as its calls carry it: each call of the request is keyed by the client's
 * key and its place among the request's calls, so a retry of the request meets each recorded outcome.
 */
export interface RequestKey {
  key: string;
  fingerprint: string;
  /** Calls made so far for the request. */
  calls: number;
  /** Set when an owner answered one of them with its recorded outcome. */
  replayed: boolean;
}

/** What an actor call needs of the request it serves: its id (for the owner's logs) and its key, if any. */
export interface CallingRequest {
  state: { requestId: string; idempotency?: RequestKey };
}

/**
 * The router with the node's call deadline (CLUSTER_CALL_TIMEOUT_MS) bound once: what the edge and the
 * services use to reach an instance's actor, wherever it runs. `for(ctx)` is the same for one request.
 */
export interface ActorCaller {
  /** Runs the call on the owner; `timeoutMs` only where a call needs another deadline than the node's. */
  call<K extends ActorCallKind>(
    instanceId: string,
    kind: K,
    payload: ActorPayload<K>,
    timeoutMs?: number,
  ): Promise<ActorResult<K>>;
  /** The same, only when some node runs the actor now (undefined otherwise: nothing is activated). */
  callIfOwned<K extends ActorCallKind>(
    instanceId: string,
    kind: K,
    payload: ActorPayload<K>,
    timeoutMs?: number,
  ): Promise<ActorResult<K> | undefined>;
  /** The bound deadline. */
  readonly timeoutMs: number;
  /** The caller for the calls that serve this request: their lines on the owner carry its id, and its key. */
  for(request: CallingRequest): ActorCaller;
}

export function actorCaller(router: Router, timeoutMs: number, request?: CallingRequest): ActorCaller {
  const requestId = request?.state.requestId;
  const keyed = (): KeyedCall | undefined => {
    const k = request?.state.idempotency;
    if (!k) return undefined;
    return { tag: { key: `${k.key}#${k.calls++}`, fingerprint: k.fingerprint }, onReplayed: () => (k.replayed = true) };
  };
  return {
    timeoutMs,
    call: (instanceId, kind, payload, deadline = timeoutMs) =>
      router.call(instanceId, kind, payload, deadline, requestId, keyed()),
    callIfOwned: (instanceId, kind, payload, deadline = timeoutMs) =>
      router.callIfOwned(instanceId, kind, payload, deadline, requestId, keyed()),
    for: (r) => actorCaller(router, timeoutMs, r),
  };
}
