import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { DEPENDENCY_WAIT, backoffDelay } from '../util/backoff.js';
import type { InstanceEventSink, MessageOnce } from './instance-event-sink.js';
import type { InstanceRecord } from '../store/records.js';
import type { EnvelopeBuilder } from './envelope-builder.js';
import type { EventBus } from './event-bus.js';
import type { EventAttachments, EventEnvelope, InstanceEvent } from './instance-events.js';

/**
 * Publishes each event's envelope on the instance's channel, where every node's WebSockets pick it up.
 * A received file's bytes go in only when the instance's WebSocket asked for them (the owner checked its
 * `base64` flag); each node's gateway still blanks them if the flag it reads is off (ws-frames.ts).
 */
export class BusEventSink implements InstanceEventSink {
  constructor(
    private readonly bus: EventBus<EventEnvelope>,
    private readonly envelopes: EnvelopeBuilder,
  ) {}

  async emit(instance: InstanceRecord, event: InstanceEvent, attachments?: EventAttachments): Promise<void> {
    const base64 = attachments?.websocketMediaBase64;
    const withMedia: InstanceEvent =
      base64 !== undefined && event.event === 'message.exchange' && event.data.message.media
        ? {
            event: event.event,
            data: { ...event.data, message: { ...event.data.message, media: { ...event.data.message.media, base64 } } },
          }
        : event;
    await this.bus.publish(instance.id, this.envelopes.build(instance, withMedia));
  }
}

export interface FanOutOptions {
  /** Fire-and-forget consumers (the WebSocket bus, as the spec says): tried once, a failure is logged. */
  bestEffort: InstanceEventSink[];
  /** The consumer that must not lose an event (the webhook queue): retried until it has queued it. */
  durable: InstanceEventSink;
  log: Logger;
  /** Wait before retry n (0-based). @default 100 ms doubling to 5 s */
  retryDelayMs?: (attempt: number) => number;
}

/**
 * Every sink gets every event: first the durable one, retried (with backoff, the actor's later events
 * waiting behind it, in order) for as long as `stillOwner` allows; then, while this node still owns the
 * instance, the best-effort ones, started in order but not awaited. A stalled Redis must not hold the
 * actor's events (and WhatsApp's receipts) behind a publish: an owner that lost the instance meanwhile
 * would publish late, beside its successor's copy of the same message.
 */
export class FanOutSink implements InstanceEventSink {
  constructor(private readonly options: FanOutOptions) {}

  async emit(
    instance: InstanceRecord,
    event: InstanceEvent,
    attachments?: EventAttachments,
    stillOwner: () => void = () => undefined,
    once?: MessageOnce,
  ): Promise<boolean> {
    for (let attempt = 0; ; attempt++) {
      stillOwner();
      try {
        // Queued before (by this message's earlier copy, or by a node that lost the instance): nothing leaves.
        if ((await this.options.durable.emit(instance, event, attachments, undefined, once)) === false) return false;
        if (attempt > 0) {
          this.options.log.info({ event: event.event, attempts: attempt + 1 }, 'event queued after retries');
        }
        break;
      } catch (err) {
        this.options.log.warn({ err, event: event.event, attempt }, 'event not queued yet; retrying');
        await sleep(this.options.retryDelayMs?.(attempt) ?? backoffDelay(attempt, DEPENDENCY_WAIT));
      }
    }
    stillOwner();
    for (const sink of this.options.bestEffort) {
      sink.emit(instance, event, attachments).catch((err: unknown) => {
        this.options.log.warn({ err, event: event.event }, 'event not published');
      });
    }
    return true;
  }
}
