/**
 * The calls an instance actor answers, with their payloads and results. A call crosses the wire as JSON
 * when the owner is another node, so payloads and results are plain data.
 */
export interface ActorCallMap {
  /** Who owns the instance and under which epoch. */
  describe: { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: one owned write, recorded when the store accepts it. */
  'probe.write': { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: saves a link (what a linked messaging session leaves), making the instance runnable. */
  'probe.link': { payload: Record<string, never>; result: ActorDescription };
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
 * - `stopped`: gone from this node; every side effect has ceased; calls get NotOwnerError.
 */
export type ActorState = 'activating' | 'active' | 'draining' | 'stopped';
