import type { Logger } from 'pino';
import { NotOwnerError, isOwnershipLoss } from '../errors.js';
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
    private readonly instanceId: string,
    private readonly log: () => Logger,
    /** True once the actor stops: queued messages are then left to the next owner. */
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

  /** Tells every extension the session is connected (again); one that fails is logged, never thrown here. */
  connected(env: ExtensionEnv): void {
    for (const e of this.#running) {
      try {
        e.extension.onConnected?.(env);
      } catch (err) {
        this.log().error({ err }, 'extension failed on a connection');
      }
    }
  }

  /**
   * Hands a message to every extension's own queue; true once every one of them durably took it, false
   * when one could not (the actor stopped first, or it failed: logged, never thrown here).
   */
  notify(message: NormalizedMessage, env: ExtensionEnv): Promise<boolean> {
    const takes: Promise<unknown>[] = [];
    for (const e of this.#running) {
      if (!e.extension.onMessage) continue;
      const handed = e.chain.then(async () => {
        if (this.stopped()) throw new NotOwnerError(this.instanceId);
        return await e.extension.onMessage!(message, env);
      });
      e.chain = handed.then(
        () => undefined,
        () => undefined,
      );
      takes.push(handed.then((r) => r?.taken));
    }
    return Promise.allSettled(takes).then((results) => {
      for (const r of results) {
        if (r.status === 'rejected' && !isOwnershipLoss(r.reason)) {
          this.log().error({ err: r.reason, message: message.id }, 'extension failed on a message');
        }
      }
      return results.every((r) => r.status === 'fulfilled');
    });
  }

  /** Stops each extension and waits for its queue. */
  async stop(): Promise<void> {
    for (const e of this.#running) {
      await e.extension.onStop?.();
      await e.chain;
    }
  }
}
