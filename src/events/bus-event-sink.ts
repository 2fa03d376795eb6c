import type { InstanceEventSink } from '../actors/messaging-behavior.js';
import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import type { InstanceRecord } from '../store/records.js';
import type { EventBus } from './event-bus.js';
import type { EventEnvelope, InstanceEvent } from './instance-events.js';

/**
 * Wraps each event in the spec's envelope (`instanceData.token` is the instance's own token, decrypted)
 * and publishes it on the instance's channel, where every node's WebSockets pick it up.
 */
export class BusEventSink implements InstanceEventSink {
  readonly #tokens = new Map<string, string>();

  constructor(
    private readonly bus: EventBus<EventEnvelope>,
    private readonly secrets: SecretBox,
    private readonly baseUrl: () => string,
  ) {}

  async emit(instance: InstanceRecord, event: InstanceEvent): Promise<void> {
    let token = this.#tokens.get(instance.id);
    if (token === undefined) {
      token = this.secrets.open(instance.tokenSealed, SecretPurpose.InstanceToken);
      this.#tokens.set(instance.id, token);
    }
    const envelope: EventEnvelope = {
      event: event.event,
      data: event.data,
      instanceData: { instance: instance.name, token, baseUrl: this.baseUrl() },
    };
    await this.bus.publish(instance.id, envelope);
  }
}
