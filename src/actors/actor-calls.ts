/**
 * The calls an instance actor answers, with their payloads and results. A call crosses the wire as JSON
 * when the owner is another node, so payloads and results are plain data. Each domain adds its calls by
 * augmenting this interface from its own `<domain>-calls.ts` (connection, messages, profile, privacy,
 * labels, status, calls, chats, groups, channels here; the chatbot, the helpdesk and the sandbox from
 * integrations/), so the actor core imports nothing of theirs.
 */
export interface ActorCallMap {
  /** Who owns the instance and under which epoch. */
  describe: { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: one owned write, recorded when the store accepts it. */
  'probe.write': { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: saves a link (what a linked messaging session leaves), making the instance runnable. */
  'probe.link': { payload: Record<string, never>; result: ActorDescription };
}

/**
 * A call made for a request that carries an Idempotency-Key: `key` names this call of that request (the
 * client's key and the call's place among the request's calls), `fingerprint` the request itself.
 */
export interface IdempotencyTag {
  key: string;
  fingerprint: string;
}

export type ActorCallKind = keyof ActorCallMap;
export type ActorPayload<K extends ActorCallKind> = ActorCallMap[K]['payload'];
export type ActorResult<K extends ActorCallKind> = ActorCallMap[K]['result'];

export interface ActorDescription {
  instanceId: string;
  nodeId: string;
  epoch: number;
  state: ActorState;
}

/**
 * Lifecycle of an actor on its node:
 * - `activating`: lease taken, epoch being claimed, behaviour starting; calls wait;
 * - `active`: runs calls one at a time;
 * - `draining`: handing off or shutting down: runs calls until the mailbox is empty (or the drain
 *   timeout passes), then stops;
 * - `stopping`: leaving on its own terms (handoff, shutdown, idle…): calls get NotOwnerError, but what
 *   the network already handed over is still handled (durably queued, acknowledged) while the lease
 *   holds, before the session closes;
 * - `stopped`: gone from this node; every side effect has ceased; calls get NotOwnerError.
 */
export type ActorState = 'activating' | 'active' | 'draining' | 'stopping' | 'stopped';
