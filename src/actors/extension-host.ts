import type { Logger } from 'pino';
import { isOwnershipLoss } from '../errors.js';
import type { NormalizedMessage } from '../msgnet/msgnet-events.js';
import type { ExtensionEnv, InstanceExtension, InstanceExtensionFactory } from './instance-extension.js';

interface RunningExtension {
  extension: InstanceExtension;
  /** This extension's message queue: in order, independent of the others. */
  chain: Promise<void>;
}

/**
 * The extensions of one actor (chatbot, helpdesk bridge, sandbox controls), one per factory of the node:
 * started after the session, told of configuration changes, and each handed every message on a queue of
 * its own, so that a slow third party delays only its extension.
 */
export class ExtensionHost {
  readonly #running: RunningExtension[];

  constructor(
    factories: InstanceExtensionFactory[],
    instanceId: string,
    private readonly log: () => Logger,
    /** True once the actor stops: queued messages are then dropped. */
    private readonly stopped: () => boolean,
  ) {
    this.#running = factories.map((factory) => ({ extension: factory.create(instanceId), chain: Promise.resolve() }));
  }

  /** The extension made by the node's `extensions[index]`. */
  get(index: number): InstanceExtension {
    return this.#running[index]!.extension;
  }

  async activate(env: ExtensionEnv): Promise<void> {
    for (const e of this.#running) await e.extension.onActivate?.(env);
  }

  async configChanged(env: ExtensionEnv): Promise<void> {
    for (const e of this.#running) await e.extension.onConfigChanged?.(env);
  }

  /** Hands a message to every extension's own queue (a failure there is logged, never thrown here). */
  notify(message: NormalizedMessage, env: ExtensionEnv): void {
    for (const e of this.#running) {
      if (!e.extension.onMessage) continue;
      e.chain = e.chain
        .then(() => (this.stopped() ? undefined : e.extension.onMessage?.(message, env)))
        .catch((err: unknown) => {
          if (!isOwnershipLoss(err)) this.log().error({ err, message: message.id }, 'extension failed on a message');
        });
    }
  }

  /** Stops each extension and waits for its queue. */
  async stop(): Promise<void> {
    for (const e of this.#running) {
      await e.extension.onStop?.();
      await e.chain;
    }
  }
}
