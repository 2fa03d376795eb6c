import type { ActorScope } from './actor-scope.js';
import type { CallHandlers } from './instance-actor.js';
import { networkOperation } from './network-operation.js';
import type { PrivacyCallMap } from './privacy-calls.js';

/** The privacy calls on the owner node, through the session's `privacy`. */
export function privacyHandlers(): Pick<CallHandlers<ActorScope>, keyof PrivacyCallMap> {
  const read = (scope: ActorScope) =>
    networkOperation('failed to read privacy settings', () => scope.session().privacy.get());
  return {
    'privacy.get': async (scope) => read(scope),
    'privacy.update': async (scope, { changes }) => {
      const { privacy } = scope.session();
      // One by one and not transactional (spec 4.3): a later failure leaves the earlier ones applied.
      for (const [field, value] of changes) {
        await networkOperation(`failed to update ${field} privacy`, () => privacy.set(field, value));
      }
      return read(scope);
    },
  };
}
