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
 * Envelopes are sent as the owner emitted them: the owner puts a received file into
 * `data.message.media.base64` only when the instance's WebSocket had `base64` on (media/received-media.ts).
 * A node that reads the flag as off (it changed within WS_CONFIG_REFRESH_MS) blanks it here.
 */
export function withoutMediaBase64(envelope: EventEnvelope): EventEnvelope {
  const data = envelope.data as { message?: { media?: { base64?: unknown } | null } } | null;
  const media = data?.message?.media;
  if (envelope.event !== 'message.exchange' || !media || media.base64 == null) return envelope;
  const message = data.message!;
  return { ...envelope, data: { ...data, message: { ...message, media: { ...media, base64: null } } } };
}
