import { randomBytes } from 'node:crypto';
import { generateMessageIDV2 } from '@whiskeysockets/baileys';
import type { MiscMessageGenerationOptions } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { ValidationError } from '../../errors.js';
import type { MediaKind, MessageContent, OutgoingMedia, SentMessage } from '../msgnet-driver.js';
import {
  contactsContent,
  editContent,
  eventCardContent,
  eventContent,
  eventMessage,
  forwardContent,
  pollContent,
  reactionContent,
} from './content-messages.js';
import { buttonsContent, carouselContent, formContent, listContent, paymentContent } from './interactive-content.js';
import type { HeaderMedia, PreparedCard } from './interactive-content.js';
import { createCallLink, relay, send, uploadMedia } from './outgoing.js';
import type { PollBook } from './poll-book.js';
import type { BaileysSocket } from './socket-port.js';

/** What sending a `MessageContent` needs from its session. */
export interface ContentSendContext {
  sock: BaileysSocket;
  /** Where a sent poll is remembered, so that its votes can be read. */
  polls: PollBook;
  log: Logger;
}

/** Header media a buttons message can show; a carousel card shows an image or a video only. */
const BUTTONS_HEADER_KINDS: readonly MediaKind[] = ['image', 'video', 'document'];
const CARD_HEADER_KINDS: readonly MediaKind[] = ['image', 'video'];

/**
 * Sends one of the kinds beyond text, media and location. `options` are Baileys' options of the send (the
 * id chosen beforehand, the quoted message of a reply); reactions and edits take the id only, as they
 * quote nothing.
 */
export async function sendContent(
  ctx: ContentSendContext,
  jid: string,
  content: MessageContent,
  options: MiscMessageGenerationOptions | undefined,
): Promise<SentMessage> {
  const { sock } = ctx;
  const idOnly = options?.messageId ? { messageId: options.messageId } : undefined;
  switch (content.kind) {
    case 'contacts':
      if (!content.contacts.length) throw new ValidationError('A contacts message needs at least one contact');
      return send(sock, jid, contactsContent(content.contacts), options);
    case 'buttons': {
      const media = content.media && (await headerMedia(ctx, content.media, BUTTONS_HEADER_KINDS));
      return relay(sock, jid, buttonsContent(jid, content, media), options);
    }
    case 'list':
      return relay(sock, jid, listContent(jid, content), options);
    case 'carousel': {
      const cards = await Promise.all(
        content.cards.map(async ({ media, ...card }): Promise<PreparedCard> => {
          if (!media) return card;
          return { ...card, media: await headerMedia(ctx, media, CARD_HEADER_KINDS) };
        }),
      );
      return relay(sock, jid, carouselContent(jid, { ...content, cards }), options);
    }
    case 'poll':
      return sendPoll(ctx, jid, content, options);
    case 'pix':
      return relay(sock, jid, paymentContent(content.payment), options);
    case 'form':
      return relay(sock, jid, formContent(jid, content.form), options);
    case 'event':
      return relay(sock, jid, eventContent(eventMessage(content.event)), options);
    case 'scheduledCall': {
      const { card } = content;
      const joinLink =
        card.joinLink || (await createCallLink(sock, card.video ? 'video' : 'audio', card.startTime)).url;
      return relay(sock, jid, eventCardContent({ ...card, joinLink }), options);
    }
    case 'reaction':
      return send(sock, jid, reactionContent(content.target, content.emoji), idOnly);
    case 'edit':
      return send(sock, jid, editContent(content.target, content.text), idOnly);
    case 'forward':
      return send(sock, jid, forwardContent(content.text, content.media), options);
  }
}

/** The poll is remembered under its id before it leaves, so that no vote can arrive before it is known. */
async function sendPoll(
  ctx: ContentSendContext,
  jid: string,
  poll: Extract<MessageContent, { kind: 'poll' }>,
  options: MiscMessageGenerationOptions | undefined,
): Promise<SentMessage> {
  const { question, options: choices, maxAnswer } = poll;
  if (!Number.isInteger(maxAnswer) || maxAnswer < 0 || maxAnswer > choices.length) {
    throw new ValidationError(`maxAnswer must be between 0 and ${choices.length}`);
  }
  const messageId = options?.messageId ?? generateMessageIDV2(ctx.sock.user?.id);
  const secret = randomBytes(32);
  ctx.polls.remember(messageId, { question, options: choices, secret, fromMe: true, creators: [] });
  return send(ctx.sock, jid, pollContent(question, choices, maxAnswer, secret), { ...options, messageId });
}

async function headerMedia(
  ctx: ContentSendContext,
  media: OutgoingMedia,
  kinds: readonly MediaKind[],
): Promise<HeaderMedia> {
  if (!kinds.includes(media.kind)) {
    throw new ValidationError(`A header shows ${kinds.join(', ')} media, not ${media.kind}`);
  }
  const { imageMessage, videoMessage, documentMessage } = await uploadMedia(ctx.sock, media, ctx.log);
  return {
    ...(imageMessage ? { imageMessage } : {}),
    ...(videoMessage ? { videoMessage } : {}),
    ...(documentMessage ? { documentMessage } : {}),
  };
}
