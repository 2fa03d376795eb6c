import { randomBytes } from 'node:crypto';
import type { AnyMessageContent, WAMessageKey, proto } from '@whiskeysockets/baileys';
import type { ContactCard, EventCard, EventDetails, MessageRef, OutgoingMedia } from '../msgnet-driver.js';
import type { RelayContent } from './interactive-content.js';
import { isGroupJid } from './jids.js';
import { mediaContent } from './outgoing.js';
import { toVcard } from './vcard.js';

// Baileys content of the message kinds beyond text, media and location (sent with `sendMessage`), and the
// hand-built event messages (relayed).

/** The key of a message of the history, as a reaction or an edit names it. */
export function messageKey(target: MessageRef): WAMessageKey {
  return {
    remoteJid: target.chatJid,
    id: target.id,
    fromMe: target.fromMe,
    ...(target.participant && isGroupJid(target.chatJid) ? { participant: target.participant } : {}),
  };
}

/** One card is a contact message, several a contacts array; the bubble shows `displayName`. */
export function contactsContent(cards: ContactCard[]): AnyMessageContent {
  const displayName = cards.length === 1 ? cards[0]!.fullName : `${cards.length} contacts`;
  return {
    contacts: {
      displayName,
      contacts: cards.map((card) => ({ displayName: card.fullName, vcard: toVcard(card) })),
    },
  };
}

/**
 * A poll; the secret encrypts the votes, and is kept to read them. One answer is a single-choice poll,
 * as many as the options (or 0) is a multiple-choice one.
 */
export function pollContent(question: string, options: string[], maxAnswer: number, secret: Buffer): AnyMessageContent {
  return { poll: { name: question, values: options, selectableCount: maxAnswer, messageSecret: secret } };
}

/** An empty emoji withdraws our reaction. */
export function reactionContent(target: MessageRef, emoji: string): AnyMessageContent {
  return { react: { text: emoji, key: messageKey(target) } };
}

/** A new text for one of our own messages (Baileys wraps it in a MESSAGE_EDIT protocol message). */
export function editContent(target: MessageRef, text: string): AnyMessageContent {
  return { text, edit: messageKey(target) };
}

/**
 * A fresh context per message, as Baileys adds a reply's quote to it in place. `forwardingScore` counts the
 * hops: from 5 WhatsApp shows "forwarded many times".
 */
function forwarded(): proto.IContextInfo {
  return { isForwarded: true, forwardingScore: 1 };
}

/** A message sent again, marked as forwarded: its text, or its media with the text as caption. */
export function forwardContent(text: string, media?: OutgoingMedia): AnyMessageContent {
  if (!media) return { text, contextInfo: forwarded() };
  const caption = text || media.caption;
  // Baileys copies `contextInfo` into any media content, audio and stickers too.
  return { ...mediaContent({ ...media, ...(caption ? { caption } : {}) }), contextInfo: forwarded() };
}

/** An event invitation in the network's terms (times in seconds). */
export function eventMessage(event: EventDetails): proto.Message.IEventMessage {
  return {
    name: event.name,
    ...(event.description ? { description: event.description } : {}),
    ...(event.location ? { location: { name: event.location } } : {}),
    ...(event.joinLink ? { joinLink: event.joinLink } : {}),
    startTime: Math.floor(event.startAt / 1000),
    ...(event.endAt ? { endTime: Math.floor(event.endAt / 1000) } : {}),
    isCanceled: false,
    extraGuestsAllowed: false,
  };
}

/**
 * An event message, relayed: Baileys' own `{event}` content builds its own call link and drops the
 * reminder fields. The secret encrypts the RSVPs; the `meta` node is what Baileys adds for events.
 */
export function eventContent(event: proto.Message.IEventMessage): RelayContent {
  return {
    message: { messageContextInfo: { messageSecret: randomBytes(32) }, eventMessage: event },
    additionalNodes: [{ tag: 'meta', attrs: { event_type: 'creation' } }],
  };
}

/** A scheduled-call card: an event around the call link we return. */
export function eventCardContent(card: EventCard): RelayContent {
  const hasReminder = card.reminderOffsetSec !== undefined && card.reminderOffsetSec > 0;
  return eventContent({
    ...eventMessage({
      name: card.name,
      ...(card.description ? { description: card.description } : {}),
      joinLink: card.joinLink,
      startAt: Math.floor(card.startTime) * 1000,
      ...(card.endTime ? { endAt: Math.floor(card.endTime) * 1000 } : {}),
    }),
    isScheduleCall: true,
    hasReminder,
    ...(hasReminder ? { reminderOffsetSec: card.reminderOffsetSec } : {}),
  });
}
