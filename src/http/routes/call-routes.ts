import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import { ValidationError } from '../../errors.js';
import { prepareAudio } from '../../media/audio.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import type { LoadedMedia } from '../../media/media-source.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, nameRequired, toRecipient } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

/** Spec 4.6 and 8: 1 to 60 seconds, 8 when omitted or 0. */
export const FAKE_CALL_DEFAULT_SECONDS = 8;
const FAKE_CALL_MAX_SECONDS = 60;
// Beyond this a "Unix seconds" value is surely milliseconds (year 5138 in seconds).
const LATEST_UNIX_SECONDS = 1e11;

const number = z
  .string()
  .trim()
  .max(128)
  .optional()
  .describe('The person to call: a phone number with country code (required)');

const fakeBody = z.strictObject({
  number,
  duration: z
    .number()
    .int()
    .optional()
    .describe(`Seconds it rings, 1 to ${FAKE_CALL_MAX_SECONDS} (0 or absent: ${FAKE_CALL_DEFAULT_SECONDS})`),
});

const scheduleBody = z.strictObject({
  number,
  name: z.string().trim().max(256).optional().describe('Title of the call (required)'),
  startTime: z.number().int().optional().describe('Unix seconds, in the future (required)'),
  description: z.string().max(4096).optional(),
  endTime: z.number().int().optional().describe('Unix seconds after startTime; 0 or absent: no end'),
  video: z.boolean().optional(),
  reminderOffsetSec: z
    .number()
    .int()
    .min(0)
    .max(30 * 86_400)
    .optional()
    .describe('Reminder this many seconds before the start'),
});

const audioBody = z.strictObject({
  number,
  mediaUrl: z
    .string()
    .trim()
    .optional()
    .describe('The audio: an http(s) URL, a data: URI or base64 (exactly one of mediaUrl and mediaBase64)'),
  mediaBase64: z.string().trim().optional().describe('The audio as base64 or a data: URI'),
});

/** An audio call's file as the client gives it: a URL through the address policy, or inline base64. */
function audioSource(b: z.infer<typeof audioBody>, media: Deps['media']): Promise<LoadedMedia> | LoadedMedia {
  const given = [b.mediaUrl, b.mediaBase64].filter((v) => v !== undefined && v !== '');
  if (given.length !== 1) {
    throw new ValidationError('Invalid request body: send exactly one of mediaUrl or mediaBase64');
  }
  if (b.mediaUrl) {
    return /^https?:\/\//i.test(b.mediaUrl)
      ? downloadMedia(b.mediaUrl, media)
      : decodeBase64Media(b.mediaUrl, 'mediaUrl', media.maxBytes);
  }
  return decodeBase64Media(b.mediaBase64!, 'mediaBase64', media.maxBytes);
}

/** A call goes to a person: a number or a user JID, never a group. */
function callee(number: string): string {
  const jid = toRecipient(number);
  if (jid.endsWith('@g.us')) throw new ValidationError('Invalid request body: calls go to a number, not a group');
  return jid;
}

/** Ring-and-drop calls and scheduled calls (spec 4.6); their own bodies, and `instance not found` in lower case. */
export function callRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/call', tag: 'Calls', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  const guard = requireInstance(deps.store, deps.auth, { notFound: 'instance not found' });
  const { actors } = deps;
  nameRequired(api, 'post', '/fake', deps.auth);
  nameRequired(api, 'post', '/schedule', deps.auth);
  nameRequired(api, 'post', '/audio', deps.auth);

  api.route(
    {
      method: 'post',
      path: '/fake/:instance',
      idempotency: idempotent,
      summary: 'Ring a number and hang up automatically',
      auth: guard,
      body: fakeBody,
      responses: { 200: 'Call placed: `{callId, number, duration}`' },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      const duration = b.duration || FAKE_CALL_DEFAULT_SECONDS;
      if (duration < 1 || duration > FAKE_CALL_MAX_SECONDS) {
        throw new ValidationError('Duration must be between 1 and 60 seconds');
      }
      const { callId } = await actors.for(ctx).call(ctx.state.instance!.id, 'call.offer', {
        to: callee(b.number),
        seconds: duration,
      });
      ctx.body = {
        success: true,
        message: 'Call placed successfully',
        callId,
        number: b.number,
        duration,
      };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/audio/:instance',
      idempotency: idempotent,
      summary: 'Call a number and play an audio file if answered',
      description:
        'The file is made Ogg/Opus with ffmpeg, then the call rings; answered, the file plays and the call hangs up; unanswered, it stops ringing. The baileys driver answers 501: WhatsApp Web cannot place a voice call.',
      auth: guard,
      body: audioBody,
      responses: {
        200: 'Call placed: `{callId, number}`',
        400: 'Number is required; send exactly one of mediaUrl or mediaBase64; not playable audio',
        501: 'Audio calls are not supported by the baileys driver',
      },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      const to = callee(b.number);
      // Refused before the file is fetched and converted, which a disconnected instance could not use.
      assertConnected(ctx.state.instance!);
      const source = await audioSource(b, deps.media);
      const audio = await prepareAudio(source.bytes, { opus: true, maxBytes: deps.media.maxBytes });
      const { callId } = await actors.for(ctx).call(ctx.state.instance!.id, 'call.audio', {
        to,
        audio: audio.data.toString('base64'),
        mimetype: audio.mimetype,
        seconds: audio.seconds,
      });
      ctx.body = { success: true, message: 'Audio call placed', callId, number: b.number };
    },
  );

  api.route(
    {
      method: 'post',
      path: '/schedule/:instance',
      idempotency: idempotent,
      summary: 'Send a scheduled call card',
      auth: guard,
      body: scheduleBody,
      responses: { 200: 'Card sent: `{messageId, token, url, startTime}`' },
    },
    async (ctx, { body: b }) => {
      if (!b.number) throw new ValidationError('Number is required');
      if (!b.name) throw new ValidationError('Invalid request body: name is required');
      if (b.startTime === undefined) throw new ValidationError('Invalid request body: startTime is required');
      if (b.startTime > LATEST_UNIX_SECONDS) {
        throw new ValidationError('Invalid request body: startTime must be in Unix seconds, not milliseconds');
      }
      if (b.startTime <= Math.floor(Date.now() / 1000)) {
        throw new ValidationError('startTime must be in the future (Unix seconds)');
      }
      // 0 or omitted means no end (spec 4.6).
      if (b.endTime && b.endTime <= b.startTime) throw new ValidationError('endTime must be after startTime');
      const to = callee(b.number);
      const card = {
        name: b.name,
        startTime: b.startTime,
        video: b.video ?? false,
        ...(b.description ? { description: b.description } : {}),
        ...(b.endTime ? { endTime: b.endTime } : {}),
        ...(b.reminderOffsetSec !== undefined ? { reminderOffsetSec: b.reminderOffsetSec } : {}),
      };
      const scheduled = await actors.for(ctx).call(ctx.state.instance!.id, 'call.schedule', { to, card });
      ctx.body = {
        success: true,
        messageId: scheduled.messageId,
        token: scheduled.token,
        url: scheduled.url,
        startTime: b.startTime,
      };
    },
  );

  return api;
}
