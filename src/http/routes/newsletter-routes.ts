import { z } from 'zod';
import type { WireMedia } from '../../actors/wire-media.js';
import { ValidationError } from '../../errors.js';
import { ImageRejectedError } from '../../media/image.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import type { LoadedMedia } from '../../media/media-source.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import { toProfilePicture } from '../../media/profile-picture.js';
import type { MediaClass } from '../../media/sniff.js';
import { requireChannelJid } from '../../msgnet/channel-jids.js';
import type { ChannelInfo } from '../../msgnet/ops/channel-ops.js';
import { ApiRouter, queryParam } from '../api-router.js';
import type { RouteContext } from '../api-router.js';
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
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth);
  const { actors } = deps;
  for (const path of ['/create', '/publish', '/follow', '/unfollow']) nameRequired(api, 'post', path, deps.auth);
  for (const path of ['/list', '/info']) nameRequired(api, 'get', path, deps.auth);
  nameRequired(api, 'post', '/join', deps.auth);
  nameRequired(api, 'delete', '/leave', deps.auth);

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
      query: z.object({
        jid: queryParam.text('The channel: `<digits>@newsletter` (required)'),
        identifier: queryParam.text("The hosted product's name: the JID, or the channel's link or code"),
      }),
      responses: {
        200: `\`{channel: ${CHANNEL_VIEW} + {state, subscriberCount}}\``,
        404: 'Channel not found',
      },
    },
    async (ctx, { query }) => {
      const jid = await channelOf(ctx, query.jid, query.identifier);
      const channel = await actors.for(ctx).call(ctx.state.instance!.id, 'channels.info', { jid });
      ctx.body = { success: true, message: 'Newsletter info retrieved', channel: hostedChannel(channel) };
    },
  );

  /**
   * A channel from `jid` or the hosted product's `identifier`: a JID, or an invite link or code, which
   * resolves among the channels the instance owns or follows (no driver looks an invite code up).
   */
  const channelOf = async (ctx: RouteContext, jid: string | undefined, identifier: string | undefined) => {
    const raw = either(jid, identifier, ['jid', 'identifier']);
    if (!raw) throw new ValidationError('jid is required');
    if (raw.includes('@') || jid !== undefined) return requireChannelJid(raw);
    const code = CHANNEL_LINK.exec(raw)?.[1] ?? raw;
    const channels = await actors.for(ctx).call(ctx.state.instance!.id, 'channels.list', {});
    const found = channels.find((c) => c.inviteLink && CHANNEL_LINK.exec(c.inviteLink)?.[1] === code);
    if (!found) {
      throw new ValidationError(
        'Invalid identifier: expected a channel JID (<digits>@newsletter); links and codes resolve only for channels this instance owns or follows',
      );
    }
    return found.jid;
  };

  api.route(
    {
      method: 'post',
      path: '/join/:instance',
      idempotency: idempotent,
      summary: "Follow a channel (the hosted product's route: identifier)",
      auth: guard,
      body: z.strictObject({
        identifier: z.string().trim().max(512).optional().describe('The channel: its JID, link or code (required)'),
        jid: z.string().trim().max(128).optional().describe("Alias of 'identifier' (a JID)"),
      }),
      responses: { 200: '`{channelJid, jid}`', 404: 'Channel not found' },
    },
    async (ctx, { body: b }) => {
      if (!b.identifier && !b.jid) throw new ValidationError('identifier is required');
      const jid = await channelOf(ctx, b.jid, b.identifier);
      await actors.for(ctx).call(ctx.state.instance!.id, 'channels.follow', { jid });
      ctx.body = { success: true, message: 'Successfully joined newsletter', channelJid: jid, jid };
    },
  );

  api.route(
    {
      method: 'delete',
      path: '/leave/:instance',
      summary: "Stop following a channel (the hosted product's route: ?identifier=)",
      auth: guard,
      query: z.object({
        identifier: queryParam.text('The channel: its JID, link or code (required)'),
        jid: queryParam.text("Alias of 'identifier' (a JID)"),
      }),
      responses: { 200: '`{channelJid, jid}`', 404: 'Channel not found' },
    },
    async (ctx, { query }) => {
      if (!query.identifier && !query.jid) throw new ValidationError('identifier is required');
      const jid = await channelOf(ctx, query.jid, query.identifier);
      await actors.for(ctx).call(ctx.state.instance!.id, 'channels.unfollow', { jid });
      ctx.body = { success: true, message: 'Successfully left newsletter', channelJid: jid, jid };
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
      ctx.body = sentBody(sent, media?.kind ?? 'text', text, jid, extra, undefined, instance);
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

/** `https://whatsapp.com/channel/<code>` → the code. */
const CHANNEL_LINK = /^https?:\/\/(?:www\.)?whatsapp\.com\/channel\/([^/?#]+)/i;

/** A channel with the hosted product's names beside ours (`state`, `subscriberCount`). */
function hostedChannel(c: ChannelInfo) {
  return { ...c, state: 'active', subscriberCount: c.subscribers };
}
