import type { InstanceEventSink } from '../events/instance-event-sink.js';
import type { ReceivedMediaPipeline } from '../events/received-media.js';
import type { MsgNetDriver, MsgNetSession } from '../msgnet/msgnet-driver.js';
import type { SecretBox } from '../security/secret-box.js';
import type { InstanceRecord, InstanceSettings } from '../store/records.js';
import type { ActorScope, SessionControl } from './actor-scope.js';
import { callHandlers } from './call-handlers.js';
import { channelHandlers } from './channel-handlers.js';
import { chatHandlers } from './chat-handlers.js';
import { connectionHandlers } from './connection-handlers.js';
import { EventPipeline } from './event-pipeline.js';
import { ExtensionHost } from './extension-host.js';
import { groupHandlers } from './group-handlers.js';
import { pruneIdempotencyRecords } from './idempotency-records.js';
import { isGracefulStop, mergeHandlers } from './instance-actor.js';
import type { ActorBehavior, ActorContext, CallHandlers, StopReason } from './instance-actor.js';
import type { InstanceExtension, InstanceExtensionFactory } from './instance-extension.js';
import type { InstanceEvent } from '../events/instance-events.js';
import { labelHandlers } from './label-handlers.js';
import { messageHandlers } from './message-handlers.js';
import { privacyHandlers } from './privacy-handlers.js';
import { profileHandlers } from './profile-handlers.js';
import { SessionLifecycle } from './session-lifecycle.js';
import { statusHandlers } from './status-handlers.js';

export interface MessagingDeps {
  driver: MsgNetDriver;
  secrets: SecretBox;
  sink: InstanceEventSink;
  /**
   * The durable sink alone (the webhook queue): where a message this owner decrypted still goes when the
   * instance was lost before its event left. WhatsApp cannot hand it to the next owner (its Signal keys are
   * spent), so it is queued without the owner's side effects (no receipt, no WebSocket, no extension).
   */
  salvage?: InstanceEventSink;
  /** Modules that run beside messaging in every actor (chatbot, helpdesk). */
  extensions?: InstanceExtensionFactory[];
  /** Received files: download, object storage, base64 for the consumers that ask (events/received-media.ts). */
  media?: ReceivedMediaPipeline;
}

/**
 * One actor's messaging, as its handlers and extensions see it: the session's lifecycle, the ordered
 * event pipeline and the extension host, made together when the actor is built.
 */
class MessagingScope implements ActorScope {
  readonly connection: SessionControl;
  readonly #lifecycle: SessionLifecycle;
  readonly #events: EventPipeline;
  readonly #extensions: ExtensionHost;

  constructor(
    readonly ctx: ActorContext,
    deps: MessagingDeps,
  ) {
    this.#extensions = new ExtensionHost(
      deps.extensions ?? [],
      ctx.instanceId,
      () => ctx.log,
      () => this.#lifecycle.stopped,
    );
    this.#lifecycle = new SessionLifecycle(
      deps,
      ctx,
      {
        report: (e) => this.#events.report(e),
        drained: () => this.drained(),
        drainedQuiet: () => this.#events.drainedQuiet(),
      },
      () => this.#extensions.configChanged(this),
    );
    this.#events = new EventPipeline(deps, ctx, this.#lifecycle, {
      notify: (message) => this.#extensions.notify(message, this),
      connected: () => this.#extensions.connected(this),
    });
    this.connection = this.#lifecycle;
  }

  session(): MsgNetSession {
    return this.#lifecycle.session();
  }

  instance(): InstanceRecord {
    return this.#lifecycle.instance();
  }

  settings(): InstanceSettings {
    return this.#lifecycle.settings();
  }

  assertOwner(): void {
    this.#lifecycle.assertOwner();
  }

  emit(event: InstanceEvent): Promise<void> {
    return this.#events.emit(event);
  }

  drained(): Promise<void> {
    return this.#events.drained();
  }

  afterEvents<T>(run: () => T): Promise<T> {
    return this.#events.afterEvents(run);
  }

  labelSource(messageId: string, source: string): void {
    this.#events.labelSource(messageId, source);
  }

  setProfileName(name: string): Promise<void> {
    return this.#events.setProfileName(name);
  }

  extension(index: number): InstanceExtension {
    return this.#extensions.get(index);
  }

  async activate(): Promise<void> {
    await pruneIdempotencyRecords(this.ctx);
    await this.#lifecycle.start();
    await this.#extensions.activate(this);
  }

  stop(reason: StopReason): Promise<void> {
    return this.#lifecycle.stop(async () => {
      await this.#extensions.stop();
      await this.#events.handedOver();
    }, isGracefulStop(reason));
  }
}

/**
 * The calls messaging and its extensions answer, one table per node: each handler gets the calling
 * actor's scope as its first argument (per-actor tables would cost every idle instance a hundred closures).
 */
function messagingHandlers(deps: MessagingDeps): CallHandlers<ActorScope> {
  return mergeHandlers<ActorScope>(
    ...(deps.extensions ?? []).map((factory, i) => factory.handlers?.<ActorScope>((scope) => scope.extension(i)) ?? {}),
    connectionHandlers(),
    messageHandlers({ ...(deps.media ? { media: deps.media } : {}) }),
    profileHandlers(),
    privacyHandlers(),
    labelHandlers(),
    statusHandlers(),
    callHandlers(),
    chatHandlers(),
    channelHandlers(),
    groupHandlers(),
  );
}

/**
 * The messaging part of an instance actor: opens the network session on activation (resuming a saved
 * link), handles the network's events in order, runs the extensions, and answers the network operations.
 * `create` makes one actor's behaviour; all of them share one handler table.
 */
export function messagingBehavior(deps: MessagingDeps): {
  create(instanceId: string): Required<Pick<ActorBehavior<ActorScope>, 'scope' | 'onActivate' | 'onStop'>>;
  handlers: CallHandlers<ActorScope>;
} {
  return {
    handlers: messagingHandlers(deps),
    create: () => {
      let own: MessagingScope | undefined;
      return {
        scope: (ctx) => (own = new MessagingScope(ctx, deps)),
        onActivate: () => own!.activate(),
        onStop: (_scope, reason) => own!.stop(reason),
      };
    },
  };
}
