import { wantsEvent } from '../../events/event-filter.js';
import type { EventEnvelope } from '../../events/instance-events.js';
import type { WebsocketConfig } from '../../store/records.js';

/**
 * What one instance's WebSocket clients receive of an envelope, under the instance's current WebSocket
 * configuration (one filter per instance, not per connection: spec section 4.10). Undefined = not sent.
 */
export function frameFor(envelope: EventEnvelope, config: WebsocketConfig | undefined): Buffer | undefined {
  if (!config?.enabled || typeof envelope?.event !== 'string') return undefined;
  if (!wantsEvent(config.events, envelope.event)) return undefined;
  return Buffer.from(JSON.stringify(config.base64 ? envelope : withoutMediaBase64(envelope)));
}

/**
 * Base64 media hook. Envelopes are sent as the owner emitted them; embedding received media is the job
 * of the received-media pipeline, which fills `data.message.media.base64` at emit time when some
 * consumer of the instance asked for it. An instance whose WebSocket configuration says `base64: false`
 * must not get it, so it is blanked here (today `base64` is always null and this copies nothing).
 */
export function withoutMediaBase64(envelope: EventEnvelope): EventEnvelope {
  const data = envelope.data as { message?: { media?: { base64?: unknown } | null } } | null;
  const media = data?.message?.media;
  if (envelope.event !== 'message.exchange' || !media || media.base64 == null) return envelope;
  const message = data.message!;
  return { ...envelope, data: { ...data, message: { ...message, media: { ...media, base64: null } } } };
}
