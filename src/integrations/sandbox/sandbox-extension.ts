import type { ExtensionEnv, InstanceExtension, InstanceExtensionFactory } from '../../actors/instance-extension.js';
import { ValidationError } from '../../errors.js';
import { sandboxControls } from '../../msgnet/sandbox/sandbox-controls.js';
import type { SandboxControls } from '../../msgnet/sandbox/sandbox-controls.js';
import type { SandboxCallMap } from './sandbox-calls.js';

type Handlers = {
  [K in keyof SandboxCallMap]: (
    ctx: ExtensionEnv['ctx'],
    payload: SandboxCallMap[K]['payload'],
  ) => Promise<SandboxCallMap[K]['result']>;
};

/**
 * The sandbox's test controls as actor calls (POST /api/sandbox/*), registered only when the driver is the
 * sandbox: the actor core never learns that such a network exists.
 */
export function sandboxExtension(): InstanceExtensionFactory {
  return {
    create: () => new SandboxControlCalls(),
    handlers: (self) => sandboxHandlers((ctx) => self(ctx) as SandboxControlCalls),
  };
}

function sandboxHandlers(of: (ctx: ExtensionEnv['ctx']) => SandboxControlCalls): Handlers {
  return {
    'sandbox.link': async (ctx, { number }) => {
      const calls = of(ctx);
      const numberJid = await calls.controls().link(number);
      await calls.env().drained();
      return { numberJid };
    },
    'sandbox.inbound': async (ctx, input) => {
      const calls = of(ctx);
      return { messageId: await calls.env().afterEvents(() => calls.controls().injectInbound(input)) };
    },
    'sandbox.call': async (ctx, { from, isVideo }) => {
      const calls = of(ctx);
      return { callId: await calls.env().afterEvents(() => calls.controls().injectCall(from, isVideo)) };
    },
    'sandbox.outbox': async (ctx, { to, after }) => of(ctx).controls().outbox(to, after),
    'sandbox.group': async (ctx, { subject, description, participants }) => {
      const calls = of(ctx);
      const group = await calls.controls().addGroup(subject, description, participants);
      await calls.env().drained();
      return group;
    },
    'sandbox.labels': async (ctx, { chat, labels }) => {
      const calls = of(ctx);
      await calls.controls().setLabels(chat, labels);
      await calls.env().drained();
      return { chat };
    },
    'sandbox.fault': async (ctx, { operation, message }) => {
      of(ctx).controls().fail(operation, message);
      return { operation };
    },
    'sandbox.profile': async (ctx) => of(ctx).controls().profile(),
  };
}

class SandboxControlCalls implements InstanceExtension {
  #env: ExtensionEnv | undefined;

  async onActivate(env: ExtensionEnv): Promise<void> {
    this.#env = env;
  }

  env(): ExtensionEnv {
    return this.#env!;
  }

  controls(): SandboxControls {
    const controls = this.#env && sandboxControls(this.#env.session());
    if (!controls) throw new ValidationError('Sandbox operations need MSGNET_DRIVER=sandbox');
    return controls;
  }
}
