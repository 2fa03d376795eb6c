import type { InstanceEvent } from '../events/instance-events.js';
import type { MsgNetSession } from '../msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../msgnet/msgnet-events.js';
import type { InstanceRecord, InstanceSettings } from '../store/records.js';
import type { ActorContext, CallHandlers } from './instance-actor.js';

/**
 * What an extension may use while its actor runs: the owner's context and the open network session (the
 * part of the actor's scope, actor-scope.ts, that extensions see).
 */
export interface ExtensionEnv {
  readonly ctx: ActorContext;
  /** @throws UnavailableError when the session is not open. */
  session(): MsgNetSession;
  /** The instance as the actor last saw it (configuration blocks re-read on `settings.apply`). */
  instance(): InstanceRecord;
  settings(): InstanceSettings;
  /** Emits an API event for this instance (webhooks, WebSockets). */
  emit(event: InstanceEvent): Promise<void>;
  /** Resolves once every network event reported so far has been handled. */
  drained(): Promise<void>;
  /**
   * Runs `run`, which makes the network report events, and answers once they are durably handled; an
   * UnavailableError when one could not be (this node lost the instance meanwhile).
   */
  afterEvents<T>(run: () => T): Promise<T>;
}

/** An extension's promise that it will durably take a message (see `InstanceExtension.onMessage`). */
export interface MessageTaken {
  taken: Promise<void>;
}

/**
 * A module that runs inside each instance actor beside messaging (the chatbot, the helpdesk bridge).
 * Messages reach it in order on its own queue, so a slow third party delays only this extension, never
 * the instance's events or the other extensions.
 */
export interface InstanceExtension {
  /** Called once messaging has opened the session (a saved link is resuming). */
  onActivate?(env: ExtensionEnv): Promise<void>;
  /**
   * Every message the instance receives or sends, after its event was emitted, in order: the next waits
   * until this one resolves. Resolving means the extension durably took the message (or has nothing to do
   * with it); `taken` defers that to the extension's own queue (one slow chat must not hold the others).
   * A message not taken (a rejection of either) stays owed to the extensions and the next owner hands it
   * over again, as it does one taken just before the owner was lost: an extension recognises a message it
   * took before by its id.
   */
  onMessage?(message: NormalizedMessage, env: ExtensionEnv): Promise<void | MessageTaken>;
  /** Called when the instance's configuration changed (the `settings.apply` call). */
  onConfigChanged?(env: ExtensionEnv): Promise<void>;
  /**
   * Called each time the session is connected (again), after the messages WhatsApp held for it: a send
   * that found it disconnected can go now. Must not wait for the instance's events (it runs on their chain).
   */
  onConnected?(env: ExtensionEnv): void;
  /** Must end every timer and side effect before it resolves; runs before the session closes. */
  onStop?(): Promise<void>;
}

/** Makes one extension per actor activation, and the calls extensions of its kind answer. */
export interface InstanceExtensionFactory {
  create(instanceId: string): InstanceExtension;
  /**
   * One table per node for all of this kind's extensions: each handler gets the calling actor's scope,
   * in which `self` finds its own extension (tables built per actor would cost every idle instance a
   * closure per call kind).
   */
  handlers?<S extends ExtensionEnv>(self: (scope: S) => InstanceExtension): CallHandlers<S>;
}
