import { AUTH_NAMESPACE } from '../store/namespaces.js';
import type { ActorDescription } from './actor-calls.js';
import type { ActorScope } from './actor-scope.js';
import { mergeHandlers } from './instance-actor.js';
import type { ActorBehavior, ActorContext, CallHandlers } from './instance-actor.js';
import { messagingBehavior } from './messaging-behavior.js';
import type { MessagingDeps } from './messaging-behavior.js';
import type { TestProbe } from './test-probe.js';

export interface BehaviorDeps {
  messaging: MessagingDeps;
  probe: TestProbe | undefined;
}

const describe = (ctx: ActorContext): ActorDescription => ({
  instanceId: ctx.instanceId,
  nodeId: ctx.nodeId,
  epoch: ctx.epoch,
  state: 'active',
});

/** The probe's calls (only with TEST_PROBE_FILE), the same for every actor of the node. */
function probeHandlers(probe: TestProbe): CallHandlers<ActorScope> {
  return {
    'probe.write': async ({ ctx }) => {
      await probe.write(ctx);
      return describe(ctx);
    },
    'probe.link': async ({ ctx }) => {
      await ctx.writeOwned([
        { namespace: AUTH_NAMESPACE, key: 'probe-link', value: JSON.stringify({ node: ctx.nodeId }) },
      ]);
      return describe(ctx);
    },
  };
}

/** The probe's ticker: at each tick, a record that the actor may act, and an owned write. */
function probeTicker(probe: TestProbe): Pick<ActorBehavior<ActorScope>, 'onActivate' | 'onStop'> {
  let ticker: NodeJS.Timeout | undefined;
  return {
    async onActivate({ ctx }) {
      ticker = setInterval(() => {
        probe.owning(ctx);
        probe.write(ctx).catch(() => undefined);
      }, probe.writeIntervalMs);
    },
    async onStop() {
      clearInterval(ticker);
    },
  };
}

/**
 * What every instance actor does on its owner node: messaging, plus the probe in tests. The handler table
 * is built once for the node; only the lifecycle (session, timers) and the scope are per actor.
 */
export function instanceBehavior(deps: BehaviorDeps): (instanceId: string) => ActorBehavior<ActorScope> {
  const messaging = messagingBehavior(deps.messaging);
  const probe = deps.probe;
  const handlers = mergeHandlers<ActorScope>(
    { describe: async ({ ctx }) => describe(ctx) },
    messaging.handlers,
    ...(probe ? [probeHandlers(probe)] : []),
  );
  return (instanceId) => {
    const own = messaging.create(instanceId);
    if (!probe || probe.writeIntervalMs <= 0) return { ...own, handlers };
    const parts = [own, probeTicker(probe)];
    return {
      scope: own.scope,
      async onActivate(scope) {
        for (const p of parts) await p.onActivate?.(scope);
      },
      async onStop(scope, reason) {
        for (const p of [...parts].reverse()) await p.onStop?.(scope, reason);
      },
      handlers,
    };
  };
}
