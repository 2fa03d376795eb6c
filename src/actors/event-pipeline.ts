import { UnavailableError, isOwnershipLoss } from '../errors.js';
import type { InstanceEventSink, MessageOnce } from '../events/instance-event-sink.js';
import { instanceState, toInstanceEvent } from '../events/instance-events.js';
import type { EventAttachments, InstanceEvent } from '../events/instance-events.js';
import { withReceivedMedia } from '../events/received-media.js';
import type { ReceivedMediaPipeline } from '../events/received-media.js';
import type { DeliveryStatus, MsgNetEvent, NormalizedMessage } from '../msgnet/msgnet-events.js';
import type { MessageRecord, MessageStatus } from '../store/records.js';
import { BoundedMap } from '../util/bounded-map.js';
import type { ActorContext } from './instance-actor.js';
import { CallRejections } from './call-rejections.js';
import { applyEdit, historyRecord, remember } from './message-history.js';
import { recordPoll } from './poll-tally.js';
import type { SessionLifecycle, SessionReports } from './session-lifecycle.js';
import { untilStored } from './until-stored.js';

/** Owed messages handed over per connection (what a few seconds of a lost owner's backlog holds). */
const OWED_BATCH = 500;

export interface PipelineDeps {
  sink: InstanceEventSink;
  /** The durable sink alone, for a received message decrypted under an ownership lost since (MessagingDeps). */
  salvage?: InstanceEventSink;
  /** Received files: download, object storage, base64 for the consumers that ask (events/received-media.ts). */
  media?: ReceivedMediaPipeline;
}

/** The instance's extensions, as the event chain reaches them. */
export interface PipelineExtensions {
  /** Hands a message, once its event left, to the extensions: true once every one durably took it. */
  notify(message: NormalizedMessage): Promise<boolean>;
  /** The session is connected (again) and what WhatsApp held for it was handled. */
  connected(): void;
}

/**
 * The network events of one actor's session, handled one after another in the order they came: the
 * seven settings applied to them, connection changes persisted under the owner's epoch, messages kept
 * in the history, then each emitted as an API event and handed to the extensions (`extensions.notify`).
 */
export class EventPipeline implements SessionReports {
  #chain: Promise<void> = Promise.resolve();
  /** Network events whose handling failed (lost ownership, or an error), for the sandbox's acknowledgements. */
  #unhandled = 0;
  /** Messages being handed to the extensions under a debt, by id, until they took them or failed to. */
  readonly #handing = new Map<string, Promise<void>>();
  /** Clients' labels (`source`) of messages being sent, by id, until their outgoing event leaves. */
  readonly #sources = new BoundedMap<string, string>(1024);
  /** Calls owed a rejection (autoRejectCalls), recorded before the network's offer is acknowledged. */
  readonly rejections: CallRejections;

  constructor(
    private readonly deps: PipelineDeps,
    private readonly ctx: ActorContext,
    private readonly lifecycle: SessionLifecycle,
    private readonly extensions: PipelineExtensions,
  ) {
    this.rejections = new CallRejections(ctx, (write) => this.#untilStored(write));
  }

  /** Rejections a previous owner recorded and did not finish (it died between the offer's ack and them). */
  async finishOwedRejections(): Promise<void> {
    const session = this.lifecycle.session();
    for (const [callId, owed] of await this.rejections.pending()) {
      await this.rejections.complete(session, callId, owed, () => this.lifecycle.assertOwner());
    }
  }

  report(event: MsgNetEvent): void {
    this.#chain = this.#chain
      .then(() => this.#handle(event))
      .catch(async (err: unknown) => {
        this.#unhandled++;
        if (!isOwnershipLoss(err)) {
          this.ctx.log.error({ err, event: event.type }, 'event handling failed');
          return;
        }
        if (event.type === 'message') await this.#salvage(event.message);
      });
  }

  drained(): Promise<void> {
    return this.#chain;
  }

  async drainedQuiet(): Promise<void> {
    for (let chain = this.#chain; ; chain = this.#chain) {
      await chain;
      if (chain === this.#chain) return;
    }
  }

  /**
   * Runs something that makes the network report events (a sandbox injection) and answers only once they
   * are durably handled: the simulated network counts a message as delivered when the owner has queued it,
   * so a 200 is never an event this owner lost (its lease ran out meanwhile). Otherwise 503, which the
   * contact's side sees as "not delivered".
   */
  async afterEvents<T>(run: () => T): Promise<T> {
    const before = this.#unhandled;
    const result = run();
    await this.drained();
    if (this.#unhandled > before || this.lifecycle.stopped) {
      throw new UnavailableError('The network event could not be handled here; the instance is moving to another node');
    }
    return result;
  }

  labelSource(messageId: string, source: string): void {
    this.#sources.set(messageId, source);
  }

  /** Caches a push name the instance just set, in order with the connection events that also write it. */
  async setProfileName(name: string): Promise<void> {
    const done = this.#chain.then(async () => {
      const connection = {
        ...this.lifecycle.instance().connection,
        profileName: name,
        updatedAt: new Date().toISOString(),
      };
      await this.ctx.setConnection(connection);
      this.lifecycle.recordConnection(connection);
    });
    this.#chain = done.catch(() => undefined);
    await done;
  }

  /**
   * An event accepted from the network leaves only while this node surely owns the instance (a node
   * resumed after SIGSTOP must not act for it), and is retried until it is durably queued.
   */
  async emit(event: InstanceEvent, attachments?: EventAttachments): Promise<void> {
    await this.#emit(event, attachments);
  }

  /** With `once`, false when that message's event was queued before, by this node or another (nothing left). */
  async #emit(event: InstanceEvent, attachments?: EventAttachments, once?: MessageOnce): Promise<boolean> {
    const stillOwner = () => this.lifecycle.assertOwner();
    stillOwner();
    return (await this.deps.sink.emit(this.lifecycle.instance(), event, attachments, stillOwner, once)) !== false;
  }

  /**
   * While the store is out, the event being handled (and every one behind it, in order) waits for it, for
   * as long as this node owns the instance: events are held, never dropped.
   */
  #untilStored<T>(write: () => Promise<T>): Promise<T> {
    return untilStored({ assertOwner: () => this.lifecycle.assertOwner(), log: this.ctx.log }, write, 'events');
  }

  async #handle(e: MsgNetEvent): Promise<void> {
    const { ctx, lifecycle } = this;
    if (lifecycle.stopped) {
      if (e.type === 'message') await this.#salvage(e.message);
      return;
    }
    const session = lifecycle.session();
    const settings = lifecycle.settings();
    switch (e.type) {
      case 'connection': {
        const before = lifecycle.instance().connection;
        // The last failure to reach the network stays shown until a connection succeeds.
        const lastError = e.state === 'connected' ? undefined : (e.error ?? before.lastError);
        const connection = {
          state: e.state,
          numberJid: e.state === 'loggedout' ? undefined : (e.numberJid ?? before.numberJid),
          updatedAt: new Date().toISOString(),
          ...(e.profileName
            ? { profileName: e.profileName }
            : before.profileName
              ? { profileName: before.profileName }
              : {}),
          ...businessOf(e.business, e.state === 'loggedout' ? {} : before),
          ...(lastError ? { lastError } : {}),
        };
        await this.#untilStored(() => ctx.setConnection(connection));
        lifecycle.recordConnection(connection);
        if (before.state !== e.state) {
          await this.emit(instanceState(lifecycle.instance().name, e.state, Date.now(), e.reason));
        }
        if (e.state === 'connected') {
          // First: those calls are still ringing, and the presence below may fail on a connection that drops.
          await this.finishOwedRejections().catch((err: unknown) => {
            if (!isOwnershipLoss(err)) {
              ctx.log.warn({ err }, 'could not finish the call rejections a previous owner owed');
            }
          });
          if (lifecycle.settings().keepOnlineStatus) {
            lifecycle.assertOwner();
            await session.profile.setPresence(true);
          }
          await this.#handOwedMessages().catch((err: unknown) => {
            if (!isOwnershipLoss(err)) ctx.log.warn({ err }, 'could not hand over the messages a previous owner owed');
          });
          this.extensions.connected();
        }
        return;
      }
      case 'message': {
        const m = e.message;
        const ignored =
          (!m.fromMe && m.chat.type === 'group' && settings.ignoreGroupMessages) ||
          (m.chat.type === 'status' && settings.ignoreStatus);
        if (ignored) {
          e.acknowledge?.();
          return;
        }
        if (await this.#emittedBefore(m.id)) {
          await this.#settleEmitted(m, e.acknowledge);
          return;
        }
        // A received file is downloaded (stored, kept for base64) first; a failure is only noted in the event.
        const media = await this.deps.media?.receive(lifecycle.instance(), m, session, ctx.log);
        // Stored before the event leaves, so that a client reacting to it finds it in the history; and
        // waited for while the store is out, since the claim below marks this row (a message queued
        // unmarked could be queued again by a node salvaging it).
        const kept = await this.#keep(historyRecord(ctx.instanceId, m, media?.stored));
        if (m.poll || m.pollVote) await recordPoll(ctx, m);
        if (!m.fromMe && m.edit) {
          await applyEdit(ctx.store, ctx.instanceId, m.edit.messageId, m.edit.text, ctx.log);
        }
        const source = this.#sources.get(m.id) ?? 'api';
        this.#sources.delete(m.id);
        const event = toInstanceEvent(e, source);
        // Queued with the message's mark in one transaction: a node salvaging the same message meanwhile,
        // or this one's next copy, finds it queued. A received message the history holds is owed to the
        // extensions until they durably took it, so that an owner losing the instance before leaves it to
        // the next one.
        const owed = !m.fromMe && kept;
        const once = { messageId: m.id, ...(owed ? { owed: JSON.stringify(m) } : {}) };
        const queued = await this.#emit(media ? withReceivedMedia(event, media) : event, media?.attachments, once);
        // Durably queued now (or before): the network may forget the message (its receipt goes).
        if (!queued) {
          await this.#settleEmitted(m, e.acknowledge);
          return;
        }
        e.acknowledge?.();
        if (owed) this.#handOver(m);
        else void this.extensions.notify(m);
        if (!m.fromMe && lifecycle.settings().autoReadMessages && m.chat.type !== 'status') {
          lifecycle.assertOwner();
          await session.messages.markRead(m.chat.jid, [m.id], m.chat.type === 'group' ? m.sender.jid : undefined);
          await this.#recordStatus([m.id], 'read');
        }
        return;
      }
      case 'delivery': {
        await this.#recordStatus(e.messageIds, storedStatus(e.status));
        await this.emit(toInstanceEvent(e));
        return;
      }
      case 'call': {
        await this.emit(toInstanceEvent(e));
        if (e.status !== 'offer' || !lifecycle.settings().autoRejectCalls) {
          e.acknowledge?.();
          return;
        }
        // An offer the network held until it had rung out is a missed call: nothing is left to reject.
        const owed = this.rejections.owed(e, lifecycle.settings().callRejectMessage || undefined);
        if (!owed) {
          e.acknowledge?.();
          return;
        }
        // The rejection is owed before the network may forget the offer: a new owner finishes it.
        await this.rejections.record(e.callId, owed);
        e.acknowledge?.();
        await this.rejections.complete(session, e.callId, owed, () => lifecycle.assertOwner());
        return;
      }
      default:
        await this.emit(toInstanceEvent(e));
    }
  }

  /**
   * A message received from a contact and decrypted, whose event could not leave because this node lost
   * the instance meanwhile: Baileys stored the Signal state its decryption spent, so WhatsApp's next copy,
   * to the next owner, cannot be decrypted (a spent pre-key is refused, not retried). The event is queued
   * for the webhooks anyway and marked emitted, owed to the extensions (the next owner settles its copy and
   * hands the message to them); nothing goes to the network or the WebSockets from here, and no receipt is
   * sent. Its files are not downloaded.
   */
  async #salvage(m: NormalizedMessage): Promise<void> {
    const { ctx, lifecycle } = this;
    const sink = this.deps.salvage;
    const settings = lifecycle.settings();
    const ignored =
      (m.chat.type === 'group' && settings.ignoreGroupMessages) || (m.chat.type === 'status' && settings.ignoreStatus);
    if (!sink || m.fromMe || ignored) return;
    try {
      if (await this.#emittedBefore(m.id)) return;
      await remember(ctx.store, historyRecord(ctx.instanceId, m), ctx.log);
      // The extensions (chatbot, helpdesk) are owed it: the next owner hands it to them.
      const owed = { messageId: m.id, owed: JSON.stringify(m) };
      const event = toInstanceEvent({ type: 'message', message: m });
      if ((await sink.emit(lifecycle.instance(), event, undefined, undefined, owed)) === false) return;
      ctx.log.info({ messageId: m.id }, 'queued the event of a message decrypted before the instance was lost');
    } catch (err) {
      ctx.log.warn(
        { err, messageId: m.id },
        'could not queue the event of a message decrypted before the instance was lost',
      );
    }
  }

  /**
   * Messages a node queued after it lost the instance (`#salvage`), handed to the extensions once connected
   * here; one whose copy WhatsApp delivers again is handed over as it arrives instead (`#settleEmitted`).
   */
  async #handOwedMessages(): Promise<void> {
    const { ctx } = this;
    for (const { id, owed } of await ctx.store.messages.owed(ctx.instanceId, OWED_BATCH)) {
      this.lifecycle.assertOwner();
      if (this.#handing.has(id)) continue;
      ctx.log.info({ messageId: id }, 'handing over a message a previous owner owed to the extensions');
      this.#handOver(JSON.parse(owed) as NormalizedMessage);
    }
  }

  /**
   * Hands an owed message to the extensions, and ends the debt once each of them durably took it; one
   * that could not (this node lost the instance first) leaves it owed to the next owner. Never waited
   * for by the event chain: an extension's queue may itself wait for the chain (a reply's send).
   */
  #handOver(m: NormalizedMessage): void {
    if (this.#handing.has(m.id)) return;
    const { ctx } = this;
    const done = (async () => {
      if (!(await this.extensions.notify(m))) return;
      await this.#untilStored(() => ctx.store.messages.settleOwed(ctx.instanceId, m.id));
    })()
      .catch((err: unknown) => {
        if (!isOwnershipLoss(err)) {
          ctx.log.warn(
            { err, messageId: m.id },
            "could not end the extensions' debt for a message; handed over again later",
          );
        }
      })
      .finally(() => this.#handing.delete(m.id));
    this.#handing.set(m.id, done);
  }

  /** Resolves once every hand-over under way has ended (the extensions stopped first). */
  async handedOver(): Promise<void> {
    await Promise.all([...this.#handing.values()]);
  }

  /**
   * Saves a message in the history, waiting while the store is out for as long as this node owns the
   * instance; false (logged) when the store refused it for another reason.
   */
  async #keep(record: MessageRecord): Promise<boolean> {
    try {
      await this.#untilStored(() => this.ctx.store.messages.save(record));
      return true;
    } catch (err) {
      if (isOwnershipLoss(err)) throw err;
      this.ctx.log.warn({ err, messageId: record.id }, 'could not store the message in the history');
      return false;
    }
  }

  /**
   * A message whose event left before (WhatsApp's next copy, or one a node queued after losing the
   * instance): the network may forget it, and the extensions get it here if they are still owed it (waiting
   * while the store is out, as the other events do; another store error leaves it to the next connection).
   */
  async #settleEmitted(m: NormalizedMessage, acknowledge: (() => void) | undefined): Promise<void> {
    acknowledge?.();
    if (m.fromMe || this.#handing.has(m.id)) return;
    const { ctx } = this;
    try {
      if (await this.#untilStored(() => ctx.store.messages.isOwed(ctx.instanceId, m.id))) this.#handOver(m);
    } catch (err) {
      if (isOwnershipLoss(err)) throw err;
      ctx.log.warn({ err, messageId: m.id }, 'could not read whether the extensions are owed a message');
    }
  }

  /**
   * Whether this message's event left already (under this owner or an earlier one): WhatsApp delivers a
   * message again when the receipt did not reach it, and clients must see it once. If the history cannot
   * be read, the message is emitted: twice is better than lost.
   */
  async #emittedBefore(messageId: string): Promise<boolean> {
    const { ctx } = this;
    try {
      return (await ctx.store.messages.find(ctx.instanceId, messageId))?.emittedAt !== undefined;
    } catch (err) {
      ctx.log.warn({ err, messageId }, 'could not read the history; the message is emitted');
      return false;
    }
  }

  /** Where messages got to, for GET /api/chat/status; a failure only loses that, never the event. */
  async #recordStatus(ids: string[], status: MessageStatus): Promise<void> {
    await this.ctx.store.messages.setStatus(this.ctx.instanceId, ids, status).catch((err: unknown) => {
      this.ctx.log.warn({ err, ids }, 'could not record a message status');
    });
  }
}

/** A received message read or played on the account's own devices is stored as read or played. */
function storedStatus(status: DeliveryStatus): MessageStatus {
  if (status === 'read_self') return 'read';
  if (status === 'played_self') return 'played';
  return status;
}

/** What a connection event says of the number's business account, else what was known (none once logged out). */
function businessOf(
  told: { isBusiness: boolean; name?: string } | undefined,
  before: { isBusiness?: boolean; businessName?: string },
): { isBusiness?: boolean; businessName?: string } {
  if (told) {
    return { isBusiness: told.isBusiness, ...(told.isBusiness && told.name ? { businessName: told.name } : {}) };
  }
  return {
    ...(before.isBusiness !== undefined ? { isBusiness: before.isBusiness } : {}),
    ...(before.businessName ? { businessName: before.businessName } : {}),
  };
}
