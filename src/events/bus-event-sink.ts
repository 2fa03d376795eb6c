import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from 'pino';
import { retryDelay } from '../util/retry-delay.js';
import type { InstanceEventSink } from './instance-event-sink.js';
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
 * Every sink gets every event. One failing consumer starves no other: the best-effort ones are tried once
 * each, and the durable one is retried (with backoff, the actor's later events waiting behind it, in order)
 * for as long as `stillOwner` allows; only losing the instance ends the retries, with its error.
 */
export class FanOutSink implements InstanceEventSink {
  constructor(private readonly options: FanOutOptions) {}

  async emit(
    instance: InstanceRecord,
    event: InstanceEvent,
    attachments?: EventAttachments,
    stillOwner: () => void = () => undefined,
  ): Promise<void> {
    const results = await Promise.allSettled(this.options.bestEffort.map((s) => s.emit(instance, event, attachments)));
    for (const r of results) {
      if (r.status === 'rejected') {
        this.options.log.warn({ err: r.reason as unknown, event: event.event }, 'event not published');
      }
    }
    for (let attempt = 0; ; attempt++) {
      stillOwner();
      try {
        await this.options.durable.emit(instance, event, attachments);
        if (attempt > 0) {
          this.options.log.info({ event: event.event, attempts: attempt + 1 }, 'event queued after retries');
        }
        return;
      } catch (err) {
        this.options.log.warn({ err, event: event.event, attempt }, 'event not queued yet; retrying');
        await sleep((this.options.retryDelayMs ?? retryDelay)(attempt));
      }
    }
  }
}
