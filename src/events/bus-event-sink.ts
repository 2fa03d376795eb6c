import type { InstanceEventSink } from '../actors/messaging-behavior.js';
import type { InstanceRecord } from '../store/records.js';
import type { EnvelopeBuilder } from './envelope-builder.js';
import type { EventBus } from './event-bus.js';
import type { EventEnvelope, InstanceEvent } from './instance-events.js';

/** Publishes each event's envelope on the instance's channel, where every node's WebSockets pick it up. */
export class BusEventSink implements InstanceEventSink {
  constructor(
    private readonly bus: EventBus<EventEnvelope>,
    private readonly envelopes: EnvelopeBuilder,
  ) {}

  async emit(instance: InstanceRecord, event: InstanceEvent): Promise<void> {
    await this.bus.publish(instance.id, this.envelopes.build(instance, event));
  }
}

/** Every sink gets every event; the first failure is reported after all have been tried. */
export class FanOutSink implements InstanceEventSink {
  constructor(private readonly sinks: InstanceEventSink[]) {}

  async emit(instance: InstanceRecord, event: InstanceEvent): Promise<void> {
    const results = await Promise.allSettled(this.sinks.map((s) => s.emit(instance, event)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed) throw failed.reason;
  }
}
