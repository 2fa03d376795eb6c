import type { ActorCaller } from '../cluster/actor-caller.js';
import type { ClusterRuntime } from '../cluster/cluster-runtime.js';
import type { MediaConfig } from '../config/config.js';
import type { Store } from '../store/store.js';
import type { Authenticator } from './auth.js';

/** What every route that reaches an instance's actor needs. */
export interface ActorRouteDeps {
  runtime: ClusterRuntime;
  store: Store;
  auth: Authenticator;
  maxBodyBytes: number;
  /** The router with the node's call deadline bound. */
  actors: ActorCaller;
  /** Limits of what the node downloads for clients (safe fetch). */
  media: MediaConfig;
}
