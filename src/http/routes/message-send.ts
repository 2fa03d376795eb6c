import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import type { SendCommon } from '../../actors/actor-calls.js';
import type { ActorCaller } from '../../cluster/actor-caller.js';
import { ValidationError } from '../../errors.js';
import type { ChatPresence, QuotedMessage, SentMessage } from '../../msgnet/msgnet-driver.js';
import type { Store } from '../../store/store.js';
import { toRecipient } from '../route-helpers.js';

/** The longest "typing…" shown before a message (the hosted product's bound). */
export const MAX_DELAY_MS = 30_000;

/** The answer of every send, as the OpenAPI document shows it. */
export const sentAnswer = { 200: 'Message sent: `{success, message, status: "sent", data: {messageId, …}}`' };

/** The fields every send takes (`delay` and `delayMs` are one field under two names). */
export const commonFields = {
  number: z
    .string()
    .trim()
    .max(128)
    .optional()
    .describe('Recipient: a phone number with country code, a JID or a group JID (required)'),
  delay: z
    .number()
    .int()
    .optional()
    .describe(`Milliseconds of "typing…" (or "recording…" before a voice note) first, 0 to ${MAX_DELAY_MS}`),
  delayMs: z.number().int().optional().describe("Alias of 'delay'"),
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
};

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
  const delay = either(b.delay, b.delayMs, ['delay', 'delayMs']) ?? 0;
  if (delay < 0 || delay > MAX_DELAY_MS) {
    throw new ValidationError(
      `Invalid request body: ${b.delay !== undefined ? 'delay' : 'delayMs'} must be from 0 to ${MAX_DELAY_MS}`,
    );
  }
  return { to: toRecipient(b.number), delay };
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

/** Every send answers `{success, message, status: "sent", data: {messageId, …}}` (the hosted product's shape). */
export function sentBody(
  sent: SentMessage,
  messageType: string,
  content: string,
  to: string,
  extra: Record<string, unknown>,
  source?: string,
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
      ...(source !== undefined ? { source } : {}),
      ...extra,
    },
  };
}
