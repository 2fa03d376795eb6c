import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { NotFoundError, ValidationError } from '../../errors.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import type { LoadedMedia } from '../../media/media-source.js';
import { buildLinkPreview } from '../../media/link-preview.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import type { MediaClass } from '../../media/sniff.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, chatAddress, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import {
  checkCommon,
  either,
  mediaFields,
  quoted,
  replyRecipient,
  quotingFields,
  sendCommon,
  sentAnswer,
  sentBody,
  waitFirst,
} from './message-send.js';

type Deps = ActorRouteDeps;

const MEDIA_TYPES: readonly MediaClass[] = ['image', 'video', 'audio', 'document'];

const mentionFields = {
  mention: z
    .array(z.string().trim().max(128))
    .max(1024)
    .optional()
    .describe('Numbers (or JIDs) to mention: each is notified; write them as @<number> in the text'),
  mentionAll: z.boolean().optional().describe('Groups only: mention every member'),
};

/** The people a send mentions, checked: never a group; `mentionAll` only in a group. */
function mentionsOf(b: { mention?: string[] | undefined; mentionAll?: boolean | undefined }, chat: string): string[] {
  const mentions = (b.mention ?? []).map((m) => toRecipient(m, 'mention'));
  if (mentions.some((jid) => jid.endsWith('@g.us'))) {
    throw new ValidationError('Invalid request body: mention takes people, not groups');
  }
  if (b.mentionAll && !chat.endsWith('@g.us')) {
    throw new ValidationError('Invalid request body: mentionAll is for groups only');
  }
  return mentions;
}

const textBody = z.strictObject({
  ...quotingFields,
  text: z.string().max(65_536).optional().describe("The text (required; 'message' is the same field)"),
  message: z.string().max(65_536).optional().describe("Alias of 'text'"),
  ...mentionFields,
  linkPreview: z
    .boolean()
    .optional()
    .describe("Show a preview card of the text's first link (title, description, image), when the page has one"),
});

const mediaBody = z.strictObject({
  ...quotingFields,
  ...mentionFields,
  type: z
    .string()
    .optional()
    .describe(`One of: ${MEDIA_TYPES.join(', ')} (required)`),
  mediaUrl: z.string().trim().max(4096).optional().describe('Public http(s) URL of the media (or base64)'),
  base64: z.string().optional().describe('The media as base64 or a data URL (or mediaUrl)'),
  mimeType: z.string().trim().max(128).optional(),
  fileName: z.string().trim().min(1).max(256).optional(),
  caption: z.string().max(4096).optional(),
  ptt: z.boolean().optional().describe('Audio: a voice note (Ogg/Opus), the default; false sends a music-style audio'),
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

const locationBody = z.strictObject({
  ...quotingFields,
  latitude: z.number().min(-90).max(90).optional().describe('Degrees, -90 to 90 (required)'),
  longitude: z.number().min(-180).max(180).optional().describe('Degrees, -180 to 180 (required)'),
  name: z.string().trim().max(256).optional().describe("The place's name"),
  address: z.string().trim().max(512).optional().describe("The place's address"),
});

const deleteBody = z.strictObject({
  messageId: z.string().trim().max(128).optional().describe('The message to revoke (required)'),
  chat: z.string().trim().max(128).optional().describe('Its chat, when the message is not in the history'),
});

/** Sending and revoking messages: text (spec's referenced endpoint), media, delete. */
export function messageRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/message', tag: 'Messages', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/text', '/media', '/location', '/delete']) nameRequired(api, 'post', path, deps.auth);

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
      const { to: chat, delay } = checkCommon(b);
      const content = either(b.text, b.message, ['text', 'message']);
      if (!content) throw new ValidationError('Message is required');
      const mentions = mentionsOf(b, chat);
      const instanceId = ctx.state.instance!.id;
      const reply = await quoted(deps.store, instanceId, b.replyTo);
      const to = replyRecipient(chat, reply, b.replyPrivate);
      const preview = b.linkPreview ? await buildLinkPreview(content, deps.media, ctx.state.log) : undefined;
      await waitFirst(actors.for(ctx), instanceId, to, delay);
      const sent = await actors.for(ctx).call(instanceId, 'msgnet.sendText', {
        ...sendCommon(to, b, reply),
        text: content,
        ...(preview ? { linkPreview: preview } : {}),
        ...(mentions.length ? { mentions } : {}),
        ...(b.mentionAll ? { mentionAll: true } : {}),
      });
      const extra = {
        ...(reply ? { replyTo: reply.id } : {}),
        ...(mentions.length ? { mentions } : {}),
        ...(b.mentionAll ? { mentionAll: true } : {}),
        ...(preview ? { linkPreview: { url: preview.url, title: preview.title } } : {}),
      };
      ctx.body = sentBody(sent, 'text', content, to, extra, b.source, ctx.state.instance);
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
        // An audio is a voice note unless told otherwise, as in the hosted product (`isVoice` defaults to true).
        ptt: either(raw.ptt, raw.isVoice, ['ptt', 'isVoice']) ?? true,
      };
      const { to: chat, delay } = checkCommon(b);
      const mentions = mentionsOf(b, chat);
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
      const instance = ctx.state.instance!;
      const reply = await quoted(deps.store, instance.id, b.replyTo);
      const to = replyRecipient(chat, reply, b.replyPrivate);
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
      await waitFirst(actors.for(ctx), instance.id, to, delay, type === 'audio' && b.ptt ? 'recording' : 'composing');
      const sent = await actors.for(ctx).call(instance.id, 'msgnet.sendMedia', {
        ...sendCommon(to, b, reply),
        ...(mentions.length ? { mentions } : {}),
        ...(b.mentionAll ? { mentionAll: true } : {}),
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
      });
      ctx.body = sentBody(
        sent,
        type,
        caption ?? '',
        to,
        {
          ...(reply ? { replyTo: reply.id } : {}),
          ...(mentions.length ? { mentions } : {}),
          ...(b.mentionAll ? { mentionAll: true } : {}),
          media: {
            mimetype: media.mimetype,
            size: media.data.length,
            ...(media.fileName ? { fileName: media.fileName } : {}),
            ...((b.duration ?? media.seconds) ? { seconds: b.duration ?? media.seconds } : {}),
          },
          ...mediaFields({
            mimetype: media.mimetype,
            size: media.data.length,
            seconds: type === 'audio' ? (b.duration ?? media.seconds) : undefined,
          }),
        },
        b.source,
        ctx.state.instance,
      );
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
      const { to: chat, delay } = checkCommon(b);
      if (b.latitude === undefined || b.longitude === undefined) {
        throw new ValidationError('Invalid request body: latitude and longitude are required');
      }
      // (0, 0) is open sea off Africa: almost always a client that sent no position at all.
      if (b.latitude === 0 && b.longitude === 0) {
        throw new ValidationError('Invalid request body: latitude 0 and longitude 0 is not a place');
      }
      const instanceId = ctx.state.instance!.id;
      const reply = await quoted(deps.store, instanceId, b.replyTo);
      const to = replyRecipient(chat, reply, b.replyPrivate);
      const location = {
        latitude: b.latitude,
        longitude: b.longitude,
        ...(b.name ? { name: b.name } : {}),
        ...(b.address ? { address: b.address } : {}),
      };
      await waitFirst(actors.for(ctx), instanceId, to, delay);
      const sent = await actors
        .for(ctx)
        .call(instanceId, 'msgnet.sendLocation', { ...sendCommon(to, b, reply), location });
      const content = [
        `📍 ${b.name ?? ''}`.trimEnd(),
        ...(b.address ? [b.address] : []),
        `Lat: ${b.latitude}, Long: ${b.longitude}`,
      ].join('\n');
      ctx.body = sentBody(
        sent,
        'location',
        content,
        to,
        { location, ...(reply ? { replyTo: reply.id } : {}) },
        b.source,
        ctx.state.instance,
      );
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
      await actors.for(ctx).call(instance.id, 'msgnet.deleteMessage', {
        chatJid,
        messageId: b.messageId,
        fromMe: known?.fromMe ?? true,
      });
      ctx.body = { success: true, message: 'Message deleted', messageId: b.messageId, chat: chatJid };
    },
  );

  return api;
}
