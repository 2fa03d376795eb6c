import { AUTH_NAMESPACE } from '../store/namespaces.js';
import type { ActorDescription } from './actor-calls.js';
import { mergeHandlers } from './instance-actor.js';
import type { ActorBehavior, ActorContext } from './instance-actor.js';
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

/**
 * The test probe's part (only with TEST_PROBE_FILE): at each tick, a record that the actor may act, and an
 * owned write; and the probe calls.
 */
function probeBehavior(probe: TestProbe): ActorBehavior {
  let ticker: NodeJS.Timeout | undefined;
  return {
    async onActivate(ctx) {
      if (probe.writeIntervalMs > 0) {
        ticker = setInterval(() => {
          probe.owning(ctx);
          probe.write(ctx).catch(() => undefined);
        }, probe.writeIntervalMs);
      }
    },
    async onStop() {
      clearInterval(ticker);
    },
    handlers: {
      'probe.write': async (ctx) => {
        await probe.write(ctx);
        return describe(ctx);
      },
      'probe.link': async (ctx) => {
        await ctx.writeOwned([
          { namespace: AUTH_NAMESPACE, key: 'probe-link', value: JSON.stringify({ node: ctx.nodeId }) },
        ]);
        return describe(ctx);
      },
    },
  };
}

/** What every instance actor does on its owner node: messaging, plus the probe in tests. */
export function instanceBehavior(deps: BehaviorDeps): (instanceId: string) => ActorBehavior {
  return (instanceId) => {
    const parts = [messagingBehavior(deps.messaging, instanceId), ...(deps.probe ? [probeBehavior(deps.probe)] : [])];
    return {
      async onActivate(ctx) {
        for (const p of parts) await p.onActivate?.(ctx);
      },
      async onStop(ctx, reason) {
        for (const p of [...parts].reverse()) await p.onStop?.(ctx, reason);
      },
      handlers: mergeHandlers(
        { describe: async (ctx: ActorContext) => describe(ctx) },
        ...parts.map((p) => p.handlers),
      ),
    };
  };
}
