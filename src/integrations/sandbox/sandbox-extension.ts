import type { ExtensionEnv, InstanceExtension, InstanceExtensionFactory } from '../../actors/instance-extension.js';
import { ValidationError } from '../../errors.js';
import { sandboxControls } from '../../msgnet/sandbox/sandbox-controls.js';
import type { SandboxControls } from '../../msgnet/sandbox/sandbox-controls.js';
import type { SandboxCallMap } from './sandbox-calls.js';

type Handlers<S> = {
  [K in keyof SandboxCallMap]: (
    scope: S,
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
    handlers: (self) => sandboxHandlers((scope) => self(scope) as SandboxControlCalls),
  };
}

function sandboxHandlers<S>(of: (scope: S) => SandboxControlCalls): Handlers<S> {
  return {
    'sandbox.link': async (scope, { number }) => {
      const calls = of(scope);
      const numberJid = await calls.controls().link(number);
      await calls.env().drained();
      return { numberJid };
    },
    'sandbox.inbound': async (scope, input) => {
      const calls = of(scope);
      return { messageId: await calls.env().afterEvents(() => calls.controls().injectInbound(input)) };
    },
    'sandbox.call': async (scope, { from, isVideo }) => {
      const calls = of(scope);
      return { callId: await calls.env().afterEvents(() => calls.controls().injectCall(from, isVideo)) };
    },
    'sandbox.answerCall': async (scope, { callId }) => {
      const calls = of(scope);
      const answered = await calls.controls().answerCall(callId);
      await calls.env().drained();
      return answered;
    },
    'sandbox.outbox': async (scope, { to, after }) => of(scope).controls().outbox(to, after),
    'sandbox.group': async (scope, { subject, description, participants }) => {
      const calls = of(scope);
      const group = await calls.controls().addGroup(subject, description, participants);
      await calls.env().drained();
      return group;
    },
    'sandbox.labels': async (scope, { chat, labels }) => {
      const calls = of(scope);
      await calls.controls().setLabels(chat, labels);
      await calls.env().drained();
      return { chat };
    },
    'sandbox.contact': async (scope, { number, fullName, firstName }) => ({
      jid: of(scope).controls().saveContact(number, fullName, firstName),
    }),
    'sandbox.fault': async (scope, { operation, message }) => {
      of(scope).controls().fail(operation, message);
      return { operation };
    },
    'sandbox.profile': async (scope) => of(scope).controls().profile(),
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
