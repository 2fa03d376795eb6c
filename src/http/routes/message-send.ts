import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { SendCommon } from '../../actors/message-calls.js';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { ValidationError } from '../../errors.js';
import type { ChatPresence, QuotedMessage, SentMessage } from '../../msgnet/msgnet-driver.js';
import type { InstanceRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { toRecipient } from '../route-helpers.js';

/** The longest "typing…" shown before a message. */
export const MAX_DELAY_MS = 30_000;
/** The same bound in seconds, the unit of the hosted product's `delay`. */
export const MAX_DELAY_SECONDS = MAX_DELAY_MS / 1000;

/** The answer of every send, as the OpenAPI document shows it. */
export const sentAnswer = { 200: 'Message sent: `{success, message, status: "sent", data: {messageId, …}}`' };

/**
 * The fields every send takes. `delay` is in seconds, as the hosted product means it (`delay: 3` shows
 * "typing…" for 3 s); `delayMs` is the same wait in milliseconds (our earlier form). One of them, not both.
 */
export const commonFields = {
  number: z
    .string()
    .trim()
    .max(128)
    .optional()
    .describe('Recipient: a phone number with country code, a JID or a group JID (required)'),
  delay: z
    .number()
    .optional()
    .describe(`Seconds of "typing…" (or "recording…" before a voice note) first, 0 to ${MAX_DELAY_SECONDS}`),
  delayMs: z
    .number()
    .int()
    .optional()
    .describe(`The same wait in milliseconds, 0 to ${MAX_DELAY_MS} (instead of 'delay')`),
  source: z
    .string()
    .trim()
    .min(1)
    .max(128)
    .optional()
    .describe("A label of yours, echoed as `message.source` in the message's outgoing `message.exchange`"),
};

/** The common fields of the kinds that can quote a message. */
export const quotingFields = {
  ...commonFields,
  replyTo: z.string().trim().min(1).max(128).optional().describe('Id of a message in the chat history to quote'),
  replyPrivate: z
    .boolean()
    .optional()
    .describe("With replyTo naming a group's message and number the group: reply in its author's private chat"),
};

/**
 * Where a reply goes: the hosted product's `replyPrivate` sends a reply to a group's message to its
 * author's private chat, keeping the quote; without it (or for a message not from a group) the recipient.
 */
export function replyRecipient(
  to: string,
  reply: QuotedMessage | undefined,
  replyPrivate: boolean | undefined,
): string {
  if (!replyPrivate || !reply || !reply.chatJid.endsWith('@g.us') || reply.fromMe) return to;
  return reply.senderJid;
}

type Common = {
  number?: string | undefined;
  delay?: number | undefined;
  delayMs?: number | undefined;
  source?: string | undefined;
};

/** A field sent under our name or the hosted product's: either one, never both. */
export function either<T>(ours: T | undefined, theirs: T | undefined, names: [string, string]): T | undefined {
  if (ours !== undefined && theirs !== undefined) {
    throw new ValidationError(`Invalid request body: send '${names[0]}' or '${names[1]}', not both`);
  }
  return ours ?? theirs;
}

/** The common fields checked: the recipient's JID and the delay in milliseconds. */
export function checkCommon(b: Common): { to: string; delay: number } {
  if (!b.number) throw new ValidationError('Number is required');
  return { to: toRecipient(b.number), delay: delayOf(b) };
}

/** The wait before a send in milliseconds, from `delay` (seconds) or `delayMs` (one of them). */
export function delayOf(b: Pick<Common, 'delay' | 'delayMs'>): number {
  either(b.delay, b.delayMs, ['delay', 'delayMs']);
  if (b.delay !== undefined) {
    if (b.delay < 0 || b.delay > MAX_DELAY_SECONDS) {
      throw new ValidationError(`Invalid request body: delay must be from 0 to ${MAX_DELAY_SECONDS} seconds`);
    }
    return Math.round(b.delay * 1000);
  }
  const ms = b.delayMs ?? 0;
  if (ms < 0 || ms > MAX_DELAY_MS) {
    throw new ValidationError(`Invalid request body: delayMs must be from 0 to ${MAX_DELAY_MS}`);
  }
  return ms;
}

/** The quoted message of a reply, from the history: the network needs its author and text. */
export async function quoted(
  store: Store,
  instanceId: string,
  id: string | undefined,
): Promise<QuotedMessage | undefined> {
  if (id === undefined) return undefined;
  const m = await store.messages.find(instanceId, id);
  if (!m) throw new ValidationError('Invalid request body: replyTo names no message in the chat history');
  return { id: m.id, chatJid: m.chatJid, fromMe: m.fromMe, senderJid: m.senderJid, text: m.text };
}

/** The actor payload's common part: recipient, quote and label. */
export function sendCommon(to: string, b: Common, reply?: QuotedMessage): SendCommon {
  return { to, ...(reply ? { replyTo: reply } : {}), ...(b.source !== undefined ? { source: b.source } : {}) };
}

/**
 * Shows "typing…" (or "recording…") for `delay` ms before a send. The wait happens at the edge, not in the
 * actor, whose mailbox must stay free for other calls.
 */
export async function waitFirst(
  actors: ActorCaller,
  instanceId: string,
  to: string,
  delay: number,
  state: ChatPresence = 'composing',
): Promise<void> {
  if (delay <= 0) return;
  await actors.call(instanceId, 'msgnet.presence', { to, state });
  const sendAt = Date.now() + delay;
  await sleep(delay);
  // A timer can fire a millisecond before Date.now() reaches its time; the delay is a promise to the client.
  if (Date.now() < sendAt) await sleep(sendAt - Date.now());
}

/**
 * Every send answers `{success, message, status: "sent", data: {messageId, …}}` (the hosted product's
 * shape): `data.chat {jid, isGroup}` and `data.sender {jid, instance}` are the hosted product's markers;
 * `extra` adds what the kind shows (mentions, replyTo, media fields…).
 */
export function sentBody(
  sent: SentMessage,
  messageType: string,
  content: string,
  to: string,
  extra: Record<string, unknown>,
  source?: string,
  instance?: InstanceRecord,
) {
  return {
    success: true,
    message: 'Message sent',
    status: 'sent',
    data: {
      messageId: sent.messageId,
      direction: 'outgoing',
      messageType,
      content,
      to,
      timestamp: new Date(sent.timestamp).toISOString(),
      source: source ?? 'api',
      chat: { jid: to, isGroup: to.endsWith('@g.us') },
      ...(instance ? { sender: { jid: instance.connection.numberJid ?? null, instance: instance.name } } : {}),
      ...extra,
    },
  };
}

/** The hosted product's media fields of a send's answer. */
export function mediaFields(media: { mimetype: string; size: number; seconds?: number | undefined }) {
  return {
    mediaUrl: null,
    mediaMimeType: media.mimetype,
    mediaSize: media.size,
    ...(media.seconds ? { mediaDuration: media.seconds } : {}),
  };
}
