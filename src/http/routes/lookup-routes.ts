import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { optionHash } from '../../actors/poll-tally.js';
import type { PollTally } from '../../actors/poll-tally.js';
import { POLLS_NAMESPACE } from '../../store/namespaces.js';
import type { MessageStatus } from '../../store/records.js';
import type { AddressBookEntry } from '../../msgnet/ops/address-book.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { toRecipient } from '../route-helpers.js';

/**
 * The hosted product's status words and codes: pending 0, sent 1, delivered 2, received 3 (a received
 * message), read 4, played 5, error -1.
 */
const HOSTED_STATUS: Record<MessageStatus, { status: string; code: number }> = {
  pending: { status: 'pending', code: 0 },
  sent: { status: 'sent', code: 1 },
  delivered: { status: 'delivered', code: 2 },
  received: { status: 'received', code: 3 },
  read: { status: 'read', code: 4 },
  played: { status: 'played', code: 5 },
  failed: { status: 'error', code: -1 },
};

/** An address book entry's name fields, in the hosted product's spelling (its engine's contact store). */
function namesOf(entry: AddressBookEntry | undefined) {
  return {
    first_name: entry?.firstName ?? null,
    full_name: entry?.fullName ?? null,
    push_name: entry?.pushName ?? null,
    business_name: entry?.businessName ?? null,
  };
}

/** Lookups clients need: the address book, is a number on WhatsApp, and where did a message get to. */
export function lookupRoutes(deps: ActorRouteDeps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Chats' });
  const guard = requireInstance(deps.store, deps.auth);

  api.route(
    {
      method: 'get',
      path: '/contacts/:instance',
      summary: 'The address book synced from the phone; with a number, that contact (and is it on WhatsApp)',
      description:
        "Without `number`: every person the phone synced (saved contacts, history-sync contacts, the push names of people who wrote), read from the instance's own copy, no WhatsApp traffic. With `number`: whether it is on WhatsApp (`found`), with its names when the address book has it (`inAddressBook`).",
      auth: guard,
      query: z.object({ number: queryParam.text('Phone number with country code, or a JID') }),
      responses: {
        200: '`{contacts: [{jid, lid, found, first_name, full_name, push_name, business_name}], total}`; with number `{contact: {found, jid, lid, inAddressBook, first_name, full_name, push_name, business_name}}`',
      },
    },
    async (ctx, { query }) => {
      const id = ctx.state.instance!.id;
      const actor = deps.actors.for(ctx);
      const raw = query.number;
      if (!raw) {
        const book = await actor.call(id, 'chats.contacts', {});
        const contacts = book.map((e) => ({ jid: e.jid, lid: e.lid, found: true, ...namesOf(e) }));
        ctx.body = { success: true, message: `${contacts.length} contacts found`, contacts, total: contacts.length };
        return;
      }
      const contact = await actor.call(id, 'msgnet.lookup', { number: toRecipient(raw) });
      const addresses = [contact.jid, contact.lid, toRecipient(raw)].filter((a): a is string => !!a);
      const [entry] = await actor.call(id, 'chats.contacts', { addresses });
      ctx.body = {
        success: true,
        message: contact.found ? 'Number is on WhatsApp' : 'Number is not on WhatsApp',
        contact: {
          found: contact.found,
          jid: contact.jid ?? entry?.jid ?? null,
          lid: contact.lid ?? entry?.lid ?? null,
          inAddressBook: !!entry,
          ...namesOf(entry),
        },
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/status/:instance',
      summary: 'Where a message got to (sent, delivered, read…)',
      auth: guard,
      query: z.object({ messageId: queryParam.text('The message (required)') }),
      responses: {
        200: '`{message_id, status (pending, sent, delivered, received, read, played, error), status_code (0 to 5, -1 for error), direction (sent or received), chat_jid, timestamp}`',
        400: 'messageId query parameter is required',
        404: 'Message not found',
      },
    },
    async (ctx, { query }) => {
      const messageId = query.messageId;
      if (!messageId) throw new ValidationError('messageId query parameter is required');
      const m = await deps.store.messages.find(ctx.state.instance!.id, messageId);
      if (!m) throw new NotFoundError('Message not found');
      const hosted = HOSTED_STATUS[m.status ?? (m.fromMe ? 'sent' : 'received')];
      ctx.body = {
        success: true,
        message: 'Message status retrieved successfully',
        message_id: m.id,
        status: hosted.status,
        status_code: hosted.code,
        direction: m.fromMe ? 'sent' : 'received',
        chat_jid: m.chatJid,
        timestamp: new Date(m.timestamp).toISOString(),
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/getMessage/:instance',
      summary: "One message of the history by its id (the hosted product's route)",
      auth: guard,
      query: z.object({ messageId: queryParam.text('The message (required)') }),
      responses: {
        200: '`{messageId, data: {content, type, from, to, chat, timestamp, isGroup, status, media?}, status: "found"}`',
        400: 'Message ID is required (use ?messageId=<message-id>)',
        404: 'Message not found',
      },
    },
    async (ctx, { query }) => {
      if (!query.messageId) throw new ValidationError('Message ID is required (use ?messageId=<message-id>)');
      const instance = ctx.state.instance!;
      const m = await deps.store.messages.find(instance.id, query.messageId);
      if (!m) throw new NotFoundError('Message not found');
      const isGroup = m.chatJid.endsWith('@g.us');
      const own = instance.connection.numberJid ?? null;
      ctx.body = {
        success: true,
        message: 'Message found',
        messageId: m.id,
        data: {
          content: m.text,
          type: m.type,
          from: m.fromMe ? own : m.senderJid,
          to: m.fromMe || isGroup ? m.chatJid : own,
          chat: m.chatJid,
          timestamp: new Date(m.timestamp).toISOString(),
          isGroup,
          status: HOSTED_STATUS[m.status ?? (m.fromMe ? 'sent' : 'received')].status,
          direction: m.fromMe ? 'sent' : 'received',
          ...(m.media
            ? {
                media: {
                  type: m.media.kind,
                  mimeType: m.media.mimetype,
                  size: m.media.size ?? null,
                  duration: null,
                  fileName: m.media.fileName ?? null,
                },
              }
            : {}),
        },
        status: 'found',
      };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/poll/:instance',
      summary: "A poll's votes: a tally per option and each voter's choice (the hosted product's route)",
      description: "Each voter's latest vote counts; answered by any node from the store.",
      auth: guard,
      query: z.object({ messageId: queryParam.text('The poll message (required)') }),
      responses: {
        200: '`{messageId, data: {messageId, name, votes: [{optionName, optionVoteCount}], voteDetails: [{optionHash, optionName, senderJid, voteMessageId, createdAt}]}}`',
        400: 'messageId query parameter is required',
        404: 'Poll not found',
      },
    },
    async (ctx, { query }) => {
      if (!query.messageId) throw new ValidationError('messageId query parameter is required');
      const raw = await deps.store.ownedState.get(ctx.state.instance!.id, POLLS_NAMESPACE, query.messageId);
      if (!raw) throw new NotFoundError('Poll not found');
      const tally = JSON.parse(raw) as PollTally;
      const ballots = Object.entries(tally.votes).flatMap(([senderJid, v]) =>
        v.options.map((optionName) => ({
          optionHash: optionHash(optionName),
          optionName,
          senderJid,
          voteMessageId: v.voteMessageId,
          createdAt: new Date(v.at).toISOString(),
        })),
      );
      const names = [...new Set([...tally.options, ...ballots.map((b) => b.optionName)])];
      ctx.body = {
        success: true,
        message: 'Poll votes retrieved successfully',
        messageId: query.messageId,
        data: {
          messageId: query.messageId,
          name: tally.question,
          votes: names.map((optionName) => ({
            optionName,
            optionVoteCount: ballots.filter((b) => b.optionName === optionName).length,
          })),
          voteDetails: ballots,
        },
      };
    },
  );

  return api;
}
