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
  return () => new SandboxControlCalls();
}

class SandboxControlCalls implements InstanceExtension {
  #env: ExtensionEnv | undefined;
  readonly handlers: Handlers;

  constructor() {
    this.handlers = {
      'sandbox.link': async (_ctx, { number }) => {
        const numberJid = await this.#controls().link(number);
        await this.#env!.drained();
        return { numberJid };
      },
      'sandbox.inbound': async (_ctx, input) => ({
        messageId: await this.#env!.afterEvents(() => this.#controls().injectInbound(input)),
      }),
      'sandbox.call': async (_ctx, { from, isVideo }) => ({
        callId: await this.#env!.afterEvents(() => this.#controls().injectCall(from, isVideo)),
      }),
      'sandbox.outbox': async (_ctx, { to, after }) => this.#controls().outbox(to, after),
      'sandbox.group': async (_ctx, { subject, description, participants }) => {
        const group = await this.#controls().addGroup(subject, description, participants);
        await this.#env!.drained();
        return group;
      },
      'sandbox.labels': async (_ctx, { chat, labels }) => {
        await this.#controls().setLabels(chat, labels);
        await this.#env!.drained();
        return { chat };
      },
      'sandbox.fault': async (_ctx, { operation, message }) => {
        this.#controls().fail(operation, message);
        return { operation };
      },
      'sandbox.profile': async () => this.#controls().profile(),
    };
  }

  async onActivate(env: ExtensionEnv): Promise<void> {
    this.#env = env;
  }

  #controls(): SandboxControls {
    const controls = this.#env && sandboxControls(this.#env.session());
    if (!controls) throw new ValidationError('Sandbox operations need MSGNET_DRIVER=sandbox');
    return controls;
  }
}
