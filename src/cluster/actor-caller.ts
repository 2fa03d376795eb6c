import type { ActorCallKind, ActorPayload, ActorResult } from '../actors/actor-calls.js';
import type { Router } from './router.js';

/** What an actor call needs of the request it serves: its id, which goes with the call into the owner's logs. */
export interface CallingRequest {
  state: { requestId: string };
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
  /** The bound deadline, for what waits on a call from outside (the Idempotency-Key records). */
  readonly timeoutMs: number;
  /** The caller for the calls that serve this request: their lines on the owner carry its id. */
  for(request: CallingRequest): ActorCaller;
}

export function actorCaller(router: Router, timeoutMs: number, requestId?: string): ActorCaller {
  return {
    timeoutMs,
    call: (instanceId, kind, payload, deadline = timeoutMs) =>
      router.call(instanceId, kind, payload, deadline, requestId),
    callIfOwned: (instanceId, kind, payload, deadline = timeoutMs) =>
      router.callIfOwned(instanceId, kind, payload, deadline, requestId),
    for: (request) => actorCaller(router, timeoutMs, request.state.requestId),
  };
}
