import type { ActorCallKind, ActorPayload, ActorResult } from '../actors/actor-calls.js';
import type { Router } from './router.js';

/**
 * The router with the node's call deadline (CLUSTER_CALL_TIMEOUT_MS) bound once: what the edge and the
 * services use to reach an instance's actor, wherever it runs.
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
}

export function actorCaller(router: Router, timeoutMs: number): ActorCaller {
  return {
    timeoutMs,
    call: (instanceId, kind, payload, deadline = timeoutMs) => router.call(instanceId, kind, payload, deadline),
    callIfOwned: (instanceId, kind, payload, deadline = timeoutMs) =>
      router.callIfOwned(instanceId, kind, payload, deadline),
  };
}
