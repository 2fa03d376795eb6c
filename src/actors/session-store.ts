import type { AuthStore } from '../msgnet/msgnet-driver.js';
import { AUTH_NAMESPACE } from '../store/namespaces.js';
import type { ActorContext } from './instance-actor.js';

/**
 * The session's persistent state in the store's owned-state namespace `auth`: reads from anywhere,
 * writes only through the actor's fenced path (each `set` one transaction under the owner's epoch).
 */
export function sessionStore(ctx: ActorContext): AuthStore {
  const owned = ctx.store.ownedState;
  return {
    get: (key) => owned.get(ctx.instanceId, AUTH_NAMESPACE, key),
    getMany: (keys) => owned.getMany(ctx.instanceId, AUTH_NAMESPACE, keys),
    // By the index: a linked session keeps hundreds of pre-keys beside the few entries a prefix asks for.
    list: (prefix) => owned.list(ctx.instanceId, AUTH_NAMESPACE, prefix || undefined),
    set: (entries) =>
      ctx.writeOwned(Object.entries(entries).map(([key, value]) => ({ namespace: AUTH_NAMESPACE, key, value }))),
    clear: () => ctx.clearOwned(AUTH_NAMESPACE),
  };
}
