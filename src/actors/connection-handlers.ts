import type { ActorScope } from './actor-scope.js';
import type { ConnectionCallMap } from './connection-calls.js';
import type { CallHandlers } from './instance-actor.js';

/** The connection's calls, run by the actor's session lifecycle (session-lifecycle.ts). */
export function connectionHandlers(): Pick<CallHandlers<ActorScope>, keyof ConnectionCallMap> {
  return {
    'msgnet.connect': async (scope, request) => scope.connection.connect(request),
    'msgnet.logout': async (scope) => ({ state: await scope.connection.logout() }),
    'msgnet.reconnect': async (scope) => ({ state: await scope.connection.reconnect() }),
    'settings.apply': async (scope) => ({ applied: await scope.connection.applySettings() }),
  };
}
