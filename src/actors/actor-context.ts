import type { Logger } from 'pino';
import type { ConnectionInfo, InstanceConfig, OwnedStateOp } from '../store/records.js';
import type { ConfigBlock, Store } from '../store/store.js';

/** What a behaviour may do while it runs a turn. Every side effect goes through the owner checks here. */
export interface ActorContext {
  readonly instanceId: string;
  readonly nodeId: string;
  readonly epoch: number;
  readonly store: Store;
  /** The actor's logger; while a call runs for a request, its lines also carry that request's id. */
  readonly log: Logger;
  /** @throws NotOwnerError unless the lease is surely still ours (checked on the monotonic clock). */
  assertOwner(): void;
  /** An owned write under this actor's epoch; a refusal stops the actor at once. */
  writeOwned(ops: OwnedStateOp[]): Promise<void>;
  /** Deletes a namespace of owned state under this actor's epoch (same fencing as writeOwned). */
  clearOwned(namespace: string): Promise<void>;
  setConnection(connection: ConnectionInfo): Promise<void>;
  /** A configuration block the owner keeps (helpdesk status), written under this actor's epoch. */
  writeConfigBlock<K extends ConfigBlock>(block: K, value: InstanceConfig[K] | undefined): Promise<void>;
}
