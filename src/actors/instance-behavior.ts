import { AUTH_NAMESPACE } from '../store/namespaces.js';
import type { ActorDescription } from './actor-calls.js';
import type { ActorBehavior, ActorContext } from './instance-actor.js';
import type { TestProbe } from './test-probe.js';

export interface BehaviorDeps {
  probe: TestProbe | undefined;
}

const describe = (ctx: ActorContext): ActorDescription => ({
  instanceId: ctx.instanceId,
  nodeId: ctx.nodeId,
  epoch: ctx.epoch,
  state: 'active',
});

/** What every instance actor does on its owner node. */
export function instanceBehavior(deps: BehaviorDeps): (instanceId: string) => ActorBehavior {
  return () => {
    let ticker: NodeJS.Timeout | undefined;
    const probe = deps.probe;
    return {
      async onActivate(ctx) {
        if (probe && probe.writeIntervalMs > 0) {
          ticker = setInterval(() => {
            probe.write(ctx).catch(() => undefined);
          }, probe.writeIntervalMs);
        }
      },
      async onStop() {
        clearInterval(ticker);
      },
      handlers: {
        describe: async (ctx) => describe(ctx),
        ...(probe
          ? {
              'probe.write': async (ctx: ActorContext) => {
                await probe.write(ctx);
                return describe(ctx);
              },
              'probe.link': async (ctx: ActorContext) => {
                await ctx.writeOwned([{ namespace: AUTH_NAMESPACE, key: 'probe-link', value: JSON.stringify({ node: ctx.nodeId }) }]);
                return describe(ctx);
              },
            }
          : {}),
      },
    };
  };
}
