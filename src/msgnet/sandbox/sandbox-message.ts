import type { ReceivedMedia } from '../msgnet-driver.js';
import type { MessageType, NormalizedMessage } from '../msgnet-events.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';

type WireMessage = Extract<SandboxWire, { t: 'msg' }>;

/** What a message on the wire is, as the receiving phone shows it. */
function typeOf(wire: WireMessage): MessageType {
  if (wire.kind) return wire.kind;
  if (wire.buttonReplyId) return 'buttons_response';
  return wire.media ? 'media' : wire.location ? 'location' : 'text';
}

/**
 * A message another phone sent, as this phone shows it, and the bytes of its file to keep for a download.
 * `isCommunity`: its group is a community this phone keeps.
 */
export function incomingMessage(
  wire: WireMessage,
  isCommunity = false,
): { message: NormalizedMessage; media?: ReceivedMedia } {
  let media: NormalizedMessage['media'];
  let received: ReceivedMedia | undefined;
  if (wire.media) {
    const { base64, ...meta } = wire.media;
    media = meta;
    if (base64 !== undefined) {
      const data = Buffer.from(base64, 'base64');
      received = { data, mimetype: meta.mimetype, ...(meta.fileName ? { fileName: meta.fileName } : {}) };
      media = { ...meta, size: meta.size ?? data.length };
    }
  }
  const message: NormalizedMessage = {
    id: wire.id,
    fromMe: false,
    timestamp: wire.timestamp,
    chat: wire.groupJid
      ? { jid: wire.groupJid, type: 'group', isCommunity }
      : { jid: wire.from, type: 'private', isCommunity: false, ...(wire.pushName ? { name: wire.pushName } : {}) },
    sender: { jid: wire.from, ...(wire.pushName ? { name: wire.pushName } : {}) },
    type: typeOf(wire),
    text: wire.text,
    ...wire.details,
    ...(media ? { media } : {}),
    ...(wire.buttonReplyId ? { selectedButtonId: wire.buttonReplyId } : {}),
    ...(wire.mentions?.length ? { mentions: wire.mentions } : {}),
    ...(wire.location ? { location: wire.location } : {}),
  };
  if (wire.newsletterJid) {
    // A channel post comes from the channel itself, under the channel's name, as WhatsApp shows it.
    const name = wire.pushName ? { name: wire.pushName } : {};
    message.chat = { jid: wire.newsletterJid, type: 'newsletter', ...name };
    message.sender = { jid: wire.newsletterJid, ...name };
  }
  return received ? { message, media: received } : { message };
}

/** A message this phone (`me`) sent to `to`, as its own message events show it. */
export function outgoingMessage(
  me: string,
  to: string,
  entry: OutboxEntry,
  wire: WireMessage,
  isCommunity = false,
): NormalizedMessage {
  return {
    id: entry.messageId,
    fromMe: true,
    timestamp: entry.timestamp,
    chat: { jid: to, type: to.endsWith('@g.us') ? 'group' : 'private', isCommunity },
    sender: { jid: me },
    type: typeOf(wire),
    text: wire.text,
    ...wire.details,
    ...(wire.media ? { media: wire.media } : {}),
    ...(wire.mentions ? { mentions: wire.mentions } : {}),
    ...(wire.location ? { location: wire.location } : {}),
  };
}
