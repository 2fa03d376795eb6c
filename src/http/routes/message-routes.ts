import { setTimeout as sleep } from 'node:timers/promises';
import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import type { LoadedMedia } from '../../media/media-source.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import type { MediaClass } from '../../media/sniff.js';
import type { QuotedMessage } from '../../msgnet/msgnet-driver.js';
import type { Store } from '../../store/store.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, chatAddress, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import type { SentMessage } from '../../msgnet/msgnet-driver.js';

type Deps = ActorRouteDeps;

/** The longest "typing…" shown before a message. */
export const MAX_DELAY_MS = 60_000;
const MEDIA_TYPES: readonly MediaClass[] = ['image', 'video', 'audio', 'document'];

const number = z
  .string()
  .trim()
  .max(128)
  .optional()
  .describe('Recipient: a phone number with country code, or a JID (required)');
const replyTo = z.string().trim().min(1).max(128).optional().describe('Id of a message in the chat history to quote');

const textBody = z.strictObject({
  number,
  text: z.string().max(65_536).optional().describe("The text (required; 'message' is the same field)"),
  message: z.string().max(65_536).optional().describe("Alias of 'text'"),
  delayMs: z.number().int().optional().describe(`Show "typing…" this long first (0 to ${MAX_DELAY_MS})`),
  replyTo,
  mention: z
    .array(z.string().trim().max(128))
    .max(1024)
    .optional()
    .describe('Numbers (or JIDs) to mention: each is notified; write them as @<number> in the text'),
  mentionAll: z.boolean().optional().describe('Groups only: mention every member'),
});

const mediaBody = z.strictObject({
  number,
  type: z
    .string()
    .optional()
    .describe(`One of: ${MEDIA_TYPES.join(', ')} (required)`),
  mediaUrl: z.string().trim().max(4096).optional().describe('Public http(s) URL of the media (or base64)'),
  base64: z.string().optional().describe('The media as base64 or a data URL (or mediaUrl)'),
  mimeType: z.string().trim().max(128).optional(),
  fileName: z.string().trim().min(1).max(256).optional(),
  caption: z.string().max(4096).optional(),
  ptt: z.boolean().optional().describe('Audio: send as a voice note (Ogg/Opus)'),
  replyTo,
  // The hosted product's names of the fields above.
  mediaType: z.string().optional().describe("Alias of 'type'"),
  mediaBase64: z.string().optional().describe("Alias of 'base64' (a data: URI is accepted)"),
  message: z.string().max(4096).optional().describe("Alias of 'caption'"),
  mimetype: z.string().trim().max(128).optional().describe("Alias of 'mimeType'"),
  isVoice: z.boolean().optional().describe("Alias of 'ptt'"),
  duration: z
    .number()
    .int()
    .min(1)
    .max(86_400)
    .optional()
    .describe('Audio: its length in seconds (measured when omitted)'),
  waveform: z
    .array(z.number().int().min(0).max(100))
    .min(1)
    .max(256)
    .optional()
    .describe('Voice note: the amplitudes (0 to 100) its player draws (computed when omitted)'),
});

/** A field sent under our name or the hosted product's: either one, never both. */
function either<T>(ours: T | undefined, theirs: T | undefined, names: [string, string]): T | undefined {
  if (ours !== undefined && theirs !== undefined) {
    throw new ValidationError(`Invalid request body: send '${names[0]}' or '${names[1]}', not both`);
  }
  return ours ?? theirs;
}

const locationBody = z.strictObject({
  number,
  latitude: z.number().min(-90).max(90).optional().describe('Degrees, -90 to 90 (required)'),
  longitude: z.number().min(-180).max(180).optional().describe('Degrees, -180 to 180 (required)'),
  name: z.string().trim().max(256).optional().describe("The place's name"),
  address: z.string().trim().max(512).optional().describe("The place's address"),
  replyTo,
});

const deleteBody = z.strictObject({
  messageId: z.string().trim().max(128).optional().describe('The message to revoke (required)'),
  chat: z.string().trim().max(128).optional().describe('Its chat, when the message is not in the history'),
});

/** The quoted message of a reply, from the history: the network needs its author and text. */
async function quoted(store: Store, instanceId: string, id: string | undefined): Promise<QuotedMessage | undefined> {
  if (id === undefined) return undefined;
  const m = await store.messages.find(instanceId, id);
  if (!m) throw new ValidationError('Invalid request body: replyTo names no message in the chat history');
  return { id: m.id, chatJid: m.chatJid, fromMe: m.fromMe, senderJid: m.senderJid, text: m.text };
}

/** Every send answers `{success, message, status: "sent", data: {messageId, …}}` (the hosted product's shape). */
function sentBody(sent: SentMessage, messageType: string, content: string, to: string, extra: Record<string, unknown>) {
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
      ...extra,
    },
  };
}

/** Sending and revoking messages: text (spec's referenced endpoint), media, delete. */
export function messageRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/message', tag: 'Messages', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/text', '/media', '/location', '/delete']) nameRequired(api, 'post', path, deps.auth);

  const sentAnswer = { 200: 'Message sent: `{success, message, status: "sent", data: {messageId, …}}`' };
  api.route(
    {
      method: 'post',
      path: '/text/:instance',
      idempotency: idempotent,
      summary: 'Send a text message',
      auth: guard,
      body: textBody,
      responses: sentAnswer,
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      if (b.text !== undefined && b.message !== undefined) {
        throw new ValidationError("Invalid request body: send 'text' or 'message', not both");
      }
      const content = b.text ?? b.message;
      if (!content) throw new ValidationError('Message is required');
      if (b.delayMs !== undefined && (b.delayMs < 0 || b.delayMs > MAX_DELAY_MS)) {
        throw new ValidationError(`Invalid request body: delayMs must be from 0 to ${MAX_DELAY_MS}`);
      }
      const to = toRecipient(b.number);
      const mentions = (b.mention ?? []).map((m) => toRecipient(m, 'mention'));
      if (mentions.some((jid) => jid.endsWith('@g.us'))) {
        throw new ValidationError('Invalid request body: mention takes people, not groups');
      }
      if (b.mentionAll && !to.endsWith('@g.us')) {
        throw new ValidationError('Invalid request body: mentionAll is for groups only');
      }
      const instanceId = ctx.state.instance!.id;
      const reply = await quoted(deps.store, instanceId, b.replyTo);
      if (b.delayMs) {
        // The wait happens here, not in the actor, whose mailbox must stay free for other calls.
        await actors.call(instanceId, 'msgnet.presence', { to, state: 'composing' });
        const sendAt = Date.now() + b.delayMs;
        await sleep(b.delayMs);
        // A timer can fire a millisecond before Date.now() reaches its time; the delay is a promise to the client.
        if (Date.now() < sendAt) await sleep(sendAt - Date.now());
      }
      const sent = await actors.call(instanceId, 'msgnet.sendText', {
        to,
        text: content,
        ...(reply ? { replyTo: reply } : {}),
        ...(mentions.length ? { mentions } : {}),
        ...(b.mentionAll ? { mentionAll: true } : {}),
      });
      ctx.body = sentBody(sent, 'text', content, to, reply ? { replyTo: reply.id } : {});
    },
  );

  api.route(
    {
      method: 'post',
      path: '/media/:instance',
      idempotency: idempotent,
      summary: 'Send an image, video, audio or document',
      description: 'The media is downloaded (or decoded) and converted on the node that receives the request.',
      auth: guard,
      body: mediaBody,
      responses: sentAnswer,
    },
    async (ctx, { body: raw }) => {
      const b = {
        ...raw,
        type: either(raw.type, raw.mediaType, ['type', 'mediaType']),
        base64: either(raw.base64, raw.mediaBase64, ['base64', 'mediaBase64']),
        caption: either(raw.caption, raw.message, ['caption', 'message']),
        mimeType: either(raw.mimeType, raw.mimetype, ['mimeType', 'mimetype']),
        ptt: either(raw.ptt, raw.isVoice, ['ptt', 'isVoice']),
      };
      if (!b.number) throw new ValidationError('Number is required');
      const type = MEDIA_TYPES.find((t) => t === b.type);
      if (!type) throw new ValidationError(`Type must be one of: ${MEDIA_TYPES.join(', ')}`);
      if (b.mediaUrl === undefined && b.base64 === undefined) {
        throw new ValidationError('mediaUrl or base64 is required');
      }
      if (b.mediaUrl !== undefined && b.base64 !== undefined) {
        throw new ValidationError("Invalid request body: send 'mediaUrl' or 'base64', not both");
      }
      if ((b.duration !== undefined || b.waveform !== undefined) && type !== 'audio') {
        throw new ValidationError("Invalid request body: 'duration' and 'waveform' are for audio only");
      }
      const to = toRecipient(b.number);
      const instance = ctx.state.instance!;
      const reply = await quoted(deps.store, instance.id, b.replyTo);
      assertConnected(instance);
      const limits = deps.media;
      const loaded: LoadedMedia =
        b.base64 !== undefined
          ? decodeBase64Media(b.base64, 'base64', limits.maxBytes)
          : await downloadMedia(b.mediaUrl!, limits);
      const media = await prepareMedia(type, loaded.bytes, {
        // Only a document takes its type from the sender; other kinds are sniffed and checked against mimeType.
        ...(b.mimeType
          ? { declaredMime: b.mimeType }
          : type === 'document' && loaded.declaredMime
            ? { declaredMime: loaded.declaredMime }
            : {}),
        ...((b.fileName ?? loaded.fileName) ? { fileName: b.fileName ?? loaded.fileName } : {}),
        opusAudio: b.ptt ?? false,
        maxBytes: limits.maxBytes,
      });
      const caption = type === 'audio' ? undefined : b.caption;
      const sent = await actors.call(instance.id, 'msgnet.sendMedia', {
        to,
        media: {
          kind: type,
          base64: media.data.toString('base64'),
          mimetype: media.mimetype,
          ...(media.fileName ? { fileName: media.fileName } : {}),
          ...(caption ? { caption } : {}),
          ...(type === 'audio' ? { ptt: b.ptt ?? false } : {}),
          ...((b.duration ?? media.seconds) ? { seconds: b.duration ?? media.seconds } : {}),
          ...((b.waveform ?? media.waveform) && b.ptt ? { waveform: [...(b.waveform ?? media.waveform!)] } : {}),
        },
        ...(reply ? { replyTo: reply } : {}),
      });
      ctx.body = sentBody(sent, type, caption ?? '', to, {
        media: {
          mimetype: media.mimetype,
          size: media.data.length,
          ...(media.fileName ? { fileName: media.fileName } : {}),
          ...((b.duration ?? media.seconds) ? { seconds: b.duration ?? media.seconds } : {}),
        },
      });
    },
  );

  api.route(
    {
      method: 'post',
      path: '/location/:instance',
      idempotency: idempotent,
      summary: 'Send a location',
      auth: guard,
      body: locationBody,
      responses: sentAnswer,
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      if (b.latitude === undefined || b.longitude === undefined) {
        throw new ValidationError('Invalid request body: latitude and longitude are required');
      }
      // (0, 0) is open sea off Africa: almost always a client that sent no position at all.
      if (b.latitude === 0 && b.longitude === 0) {
        throw new ValidationError('Invalid request body: latitude 0 and longitude 0 is not a place');
      }
      const to = toRecipient(b.number);
      const instanceId = ctx.state.instance!.id;
      const reply = await quoted(deps.store, instanceId, b.replyTo);
      const location = {
        latitude: b.latitude,
        longitude: b.longitude,
        ...(b.name ? { name: b.name } : {}),
        ...(b.address ? { address: b.address } : {}),
      };
      const sent = await actors.call(instanceId, 'msgnet.sendLocation', {
        to,
        location,
        ...(reply ? { replyTo: reply } : {}),
      });
      ctx.body = sentBody(sent, 'location', b.name ?? '', to, { location });
    },
  );

  api.route(
    {
      method: 'post',
      path: '/delete/:instance',
      idempotency: idempotent,
      summary: 'Revoke a message for everyone',
      auth: guard,
      body: deleteBody,
      responses: { 200: 'Message deleted' },
    },
    async (ctx, { body: b }) => {
      if (!b.messageId) throw new ValidationError('messageId is required');
      const instance = ctx.state.instance!;
      const known = await deps.store.messages.find(instance.id, b.messageId);
      const chatJid = b.chat ? chatAddress(b.chat) : known?.chatJid;
      if (!chatJid) throw new NotFoundError('Message not found in the chat history; give its chat');
      // Only one's own messages can be revoked for everyone (or others' as a group admin): the network decides.
      await actors.call(instance.id, 'msgnet.deleteMessage', {
        chatJid,
        messageId: b.messageId,
        fromMe: known?.fromMe ?? true,
      });
      ctx.body = { success: true, message: 'Message deleted', messageId: b.messageId, chat: chatJid };
    },
  );

  return api;
}
