import { z } from 'zod';
import type { WireMedia } from '../../actors/actor-calls.js';
import { ValidationError } from '../../errors.js';
import { ImageRejectedError } from '../../media/image.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import type { LoadedMedia } from '../../media/media-source.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import { toProfilePicture } from '../../media/profile-picture.js';
import type { MediaClass } from '../../media/sniff.js';
import { requireChannelJid } from '../../msgnet/channel-jids.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { idempotency } from '../idempotency.js';
import { assertConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { either, sentAnswer, sentBody } from './message-send.js';

type Deps = ActorRouteDeps;

const MEDIA_TYPES: readonly MediaClass[] = ['image', 'video', 'audio', 'document'];

const CHANNEL_VIEW = '`{jid, name, description, pictureUrl, subscribers, role: owner|follower|none, inviteLink}`';

const jidField = z.string().trim().max(128).optional().describe('The channel: `<digits>@newsletter` (required)');

const createBody = z.strictObject({
  name: z.string().trim().max(100).optional().describe("The channel's name (required)"),
  description: z.string().trim().max(2048).optional(),
  picture: z
    .string()
    .trim()
    .max(16 * 1024 * 1024)
    .optional()
    .describe('An http(s) URL, base64 or a data: URI of an image (made a JPEG of at most 640×640)'),
});

const publishBody = z.strictObject({
  jid: jidField,
  message: z.string().max(65_536).optional().describe('The text (required without media), or the caption of the media'),
  mediaType: z
    .string()
    .optional()
    .describe(`With media: one of ${MEDIA_TYPES.join(', ')}`),
  mediaUrl: z.string().trim().max(4096).optional().describe('Public http(s) URL of the media (or mediaBase64)'),
  mediaBase64: z.string().optional().describe('The media as base64 or a data: URI (or mediaUrl)'),
  mimetype: z.string().trim().max(128).optional(),
  fileName: z.string().trim().min(1).max(256).optional(),
});

const jidBody = z.strictObject({ jid: jidField });

/** The picture of a new channel, as the JPEG WhatsApp shows: from a URL, base64 or a data: URI. */
async function channelPicture(value: string, deps: Deps): Promise<string> {
  const loaded = /^https?:\/\//i.test(value)
    ? await downloadMedia(value, deps.media)
    : decodeBase64Media(value, 'picture', deps.media.maxBytes);
  try {
    return (await toProfilePicture(loaded.bytes)).toString('base64');
  } catch (err) {
    if (!(err instanceof ImageRejectedError)) throw err;
    throw new ValidationError(`Invalid picture: ${err.message}`, { cause: err });
  }
}

/** A post's media, loaded and converted here as the media send does; undefined for a text post. */
async function postMedia(
  b: z.output<typeof publishBody>,
  deps: Deps,
  assert: () => void,
): Promise<WireMedia | undefined> {
  if (b.mediaType === undefined && b.mediaUrl === undefined && b.mediaBase64 === undefined) return undefined;
  const type = MEDIA_TYPES.find((t) => t === b.mediaType);
  if (!type) throw new ValidationError(`mediaType must be one of: ${MEDIA_TYPES.join(', ')}`);
  const source = either(b.mediaUrl, b.mediaBase64, ['mediaUrl', 'mediaBase64']);
  if (source === undefined) throw new ValidationError('mediaUrl or mediaBase64 is required');
  assert();
  const limits = deps.media;
  const loaded: LoadedMedia =
    b.mediaBase64 !== undefined
      ? decodeBase64Media(b.mediaBase64, 'mediaBase64', limits.maxBytes)
      : await downloadMedia(source, limits);
  const media = await prepareMedia(type, loaded.bytes, {
    // Only a document takes its type from the sender; other kinds are sniffed and checked against mimetype.
    ...(b.mimetype
      ? { declaredMime: b.mimetype }
      : type === 'document' && loaded.declaredMime
        ? { declaredMime: loaded.declaredMime }
        : {}),
    ...((b.fileName ?? loaded.fileName) ? { fileName: b.fileName ?? loaded.fileName } : {}),
    opusAudio: false,
    maxBytes: limits.maxBytes,
  });
  return {
    kind: type,
    base64: media.data.toString('base64'),
    mimetype: media.mimetype,
    ...(media.fileName ? { fileName: media.fileName } : {}),
    ...(b.message && type !== 'audio' ? { caption: b.message } : {}),
    ...(media.seconds ? { seconds: media.seconds } : {}),
  };
}

/** Channels (WhatsApp's newsletters): create, list, read, publish, follow and unfollow. */
export function newsletterRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/newsletter', tag: 'Channels', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency(deps.actors);
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/create', '/publish', '/follow', '/unfollow']) nameRequired(api, 'post', path, deps.auth);
  for (const path of ['/list', '/info']) nameRequired(api, 'get', path, deps.auth);

  api.route(
    {
      method: 'post',
      path: '/create/:instance',
      idempotency: idempotent,
      summary: 'Create a channel owned by the instance',
      auth: guard,
      body: createBody,
      responses: { 200: `Channel created: \`{channel: ${CHANNEL_VIEW}}\`` },
    },
    async (ctx, { body: b }) => {
      if (!b.name) throw new ValidationError('name is required');
      const instance = ctx.state.instance!;
      assertConnected(instance);
      const picture = b.picture ? await channelPicture(b.picture, deps) : undefined;
      const channel = await actors.for(ctx).call(instance.id, 'channels.create', {
        name: b.name,
        ...(b.description ? { description: b.description } : {}),
        ...(picture ? { picture } : {}),
      });
      ctx.body = { success: true, message: 'Channel created', channel };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/list/:instance',
      summary: 'The channels the instance owns or follows',
      auth: guard,
      responses: { 200: `\`{channels: [${CHANNEL_VIEW}], meta: {total}}\`` },
    },
    async (ctx) => {
      const channels = await actors.for(ctx).call(ctx.state.instance!.id, 'channels.list', {});
      ctx.body = { success: true, message: 'Channels retrieved', channels, meta: { total: channels.length } };
    },
  );

  api.route(
    {
      method: 'get',
      path: '/info/:instance',
      summary: 'A channel, as the instance sees it',
      auth: guard,
      query: z.object({ jid: queryParam.text('The channel: `<digits>@newsletter` (required)') }),
      responses: { 200: `\`{channel: ${CHANNEL_VIEW}}\``, 404: 'Channel not found' },
    },
    async (ctx, { query }) => {
      if (!query.jid) throw new ValidationError('jid is required');
      const jid = requireChannelJid(query.jid);
      const channel = await actors.for(ctx).call(ctx.state.instance!.id, 'channels.info', { jid });
      ctx.body = { success: true, message: 'Channel found', channel };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/publish/:instance',
      idempotency: idempotent,
      summary: 'Publish a text or a media on a channel the instance owns',
      description: 'The media is downloaded (or decoded) and converted on the node that receives the request.',
      auth: guard,
      body: publishBody,
      responses: { ...sentAnswer, 403: "Only the channel's owner can publish" },
    },
    async (ctx, { body: b }) => {
      if (!b.jid) throw new ValidationError('jid is required');
      const jid = requireChannelJid(b.jid);
      const instance = ctx.state.instance!;
      const media = await postMedia(b, deps, () => assertConnected(instance));
      const text = media?.kind === 'audio' ? '' : (b.message ?? '');
      if (!media && !text) throw new ValidationError('message is required');
      const sent = await actors
        .for(ctx)
        .call(instance.id, 'channels.publish', { jid, text, ...(media ? { media } : {}) });
      const extra = media
        ? {
            media: {
              mimetype: media.mimetype,
              size: Buffer.byteLength(media.base64, 'base64'),
              ...(media.fileName ? { fileName: media.fileName } : {}),
            },
          }
        : {};
      ctx.body = sentBody(sent, media?.kind ?? 'text', text, jid, extra);
    },
  );

  for (const [op, done] of [
    ['follow', 'Channel followed'],
    ['unfollow', 'Channel unfollowed'],
  ] as const) {
    api.route(
      {
        method: 'post',
        path: `/${op}/:instance`,
        idempotency: idempotent,
        summary: op === 'follow' ? 'Follow a channel' : 'Stop following a channel',
        auth: guard,
        body: jidBody,
        responses: { 200: `${done}: \`{jid}\``, 404: 'Channel not found' },
      },
      async (ctx, { body: b }) => {
        if (!b.jid) throw new ValidationError('jid is required');
        const jid = requireChannelJid(b.jid);
        await actors.for(ctx).call(ctx.state.instance!.id, `channels.${op}`, { jid });
        ctx.body = { success: true, message: done, jid };
      },
    );
  }

  return api;
}
