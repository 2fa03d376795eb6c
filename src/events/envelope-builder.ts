import { SecretPurpose } from '../security/secret-box.js';
import type { SecretBox } from '../security/secret-box.js';
import type { InstanceRecord } from '../store/records.js';
import type { EventEnvelope, InstanceEvent } from './instance-events.js';

/** Wraps an event in the spec's envelope; `instanceData.token` is the instance's own token, decrypted. */
export class EnvelopeBuilder {
  /** Each instance's token, opened once per sealed value (a rotation seals a new one). */
  readonly #tokens = new Map<string, { sealed: string; token: string }>();

  constructor(
    private readonly secrets: SecretBox,
    private readonly baseUrl: () => string,
  ) {}

  build(instance: InstanceRecord, event: InstanceEvent): EventEnvelope {
    let cached = this.#tokens.get(instance.id);
    if (cached?.sealed !== instance.tokenSealed) {
      cached = {
        sealed: instance.tokenSealed,
        token: this.secrets.open(instance.tokenSealed, SecretPurpose.InstanceToken),
      };
      this.#tokens.set(instance.id, cached);
    }
    const { token } = cached;
    return {
      event: event.event,
      data: event.data,
      instanceData: { instance: instance.name, token, baseUrl: this.baseUrl() },
    };
  }
}
