import type { InstanceEventSink } from '../actors/messaging-behavior.js';
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

/** Every sink gets every event; the first failure is reported after all have been tried. */
export class FanOutSink implements InstanceEventSink {
  constructor(private readonly sinks: InstanceEventSink[]) {}

  async emit(instance: InstanceRecord, event: InstanceEvent, attachments?: EventAttachments): Promise<void> {
    const results = await Promise.allSettled(this.sinks.map((s) => s.emit(instance, event, attachments)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
