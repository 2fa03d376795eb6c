import { idempotency } from '../idempotency.js';
import { z } from 'zod';
import type { StatusPayload } from '../../actors/status-calls.js';
import type { WireMedia } from '../../actors/wire-media.js';
import { AppError, ErrorCode, ValidationError } from '../../errors.js';
import { downloadMedia } from '../../media/media-source.js';
import { prepareMedia, STATUS_VIDEO_MAX_SECONDS } from '../../media/outgoing-media.js';
import { FetchFailedError, FetchRefusedError } from '../../media/safe-fetch.js';
import type { AppState } from '../app-state.js';
import { ApiRouter } from '../api-router.js';
import { requireInstance } from '../auth.js';
import { assertConnected, disconnectedWhenNotConnected, nameRequired } from '../route-helpers.js';
import type { ActorRouteDeps } from '../route-deps.js';

type Deps = ActorRouteDeps;

const STATUS_TYPES = ['text', 'image', 'video', 'audio'] as const;
type StatusType = (typeof STATUS_TYPES)[number];

/** Status font names → WhatsApp's FontType numbers (SYSTEM 0, SYSTEM_TEXT 1, FB_SCRIPT 2, SYSTEM_BOLD 6 …). */
export const STATUS_FONTS: Record<string, number> = {
  system: 0,
  'sans-serif': 0,
  serif: 1,
  script: 2,
  bold: 6,
  morningbreeze: 7,
  calistoga: 8,
  exo2: 9,
  courierprime: 10,
};
const FONT_NUMBERS = new Set(Object.values(STATUS_FONTS));

const statusBody = z.strictObject({
  type: z
    .string()
    .optional()
    .describe(`One of: ${STATUS_TYPES.join(', ')} (required)`),
  message: z.string().max(65_536).optional().describe('The text, or the caption of the media (required)'),
  mediaUrl: z
    .string()
    .trim()
    .max(4096)
    .optional()
    .describe('Public http(s) URL of the media (required unless type is text)'),
  mimeType: z.string().trim().max(128).optional(),
  fileName: z.string().max(256).optional(),
  backgroundColor: z.string().trim().max(16).optional().describe('Text status: a hex colour such as #1E90FF'),
  font: z
    .union([z.string().trim().max(32), z.number().int()])
    .optional()
    .describe(`Text status: ${Object.keys(STATUS_FONTS).join(', ')}, or its number`),
  isVoice: z.boolean().optional().describe('Audio: a voice note (default true)'),
  duration: z.number().int().min(0).max(4_294_967_295).optional().describe('Audio: seconds (measured when absent)'),
  waveform: z
    .array(z.number().int().min(0).max(255))
    .min(1)
    .max(256)
    .optional()
    .describe('Audio: the voice-note waveform (computed when absent)'),
  source: z.string().trim().max(64).optional().describe('Echoed as data.source (default: api)'),
});

/** `RGB` or `RRGGBB`, with or without `#` → `#RRGGBB` (Baileys takes the colour only as that string). */
function colour(raw: string): string {
  const hex = raw.replace(/^#/, '');
  if (/^[0-9a-f]{3}$/i.test(hex)) return `#${[...hex].map((c) => c + c).join('')}`.toUpperCase();
  if (/^[0-9a-f]{6}$/i.test(hex)) return `#${hex}`.toUpperCase();
  throw new ValidationError('Invalid request body: backgroundColor must be a hex colour such as #1E90FF');
}

function font(raw: string | number): number {
  if (typeof raw === 'number' && FONT_NUMBERS.has(raw)) return raw;
  const named = typeof raw === 'string' ? STATUS_FONTS[raw.toLowerCase().replace(/[\s_]+/g, '-')] : undefined;
  if (named === undefined) {
    throw new ValidationError(`Invalid request body: font must be one of: ${Object.keys(STATUS_FONTS).join(', ')}`);
  }
  return named;
}

/** Downloads and prepares a status's media; every download failure is the spec's one message. */
async function statusMedia(
  type: Exclude<StatusType, 'text'>,
  b: z.infer<typeof statusBody>,
  deps: Deps,
  log: AppState['log'],
): Promise<WireMedia> {
  let loaded;
  try {
    loaded = await downloadMedia(b.mediaUrl!, deps.media);
  } catch (err) {
    if (!(err instanceof FetchRefusedError || err instanceof FetchFailedError)) throw err;
    log.info({ reason: err.reason }, 'status media download refused or failed');
    throw new AppError(ErrorCode.MediaDownloadFailed, 'Failed to download media from URL', { cause: err });
  }
  const media = await prepareMedia(type, loaded.bytes, {
    ...(b.mimeType ? { declaredMime: b.mimeType } : {}),
    opusAudio: true,
    maxVideoSeconds: STATUS_VIDEO_MAX_SECONDS,
    maxBytes: deps.media.maxBytes,
  });
  return {
    kind: type,
    base64: media.data.toString('base64'),
    mimetype: media.mimetype,
    ...(b.fileName ? { fileName: b.fileName } : {}),
    ...(type === 'audio'
      ? {
          ptt: b.isVoice ?? true,
          seconds: b.duration || media.seconds,
          waveform: b.waveform ?? (media.waveform ? [...media.waveform] : undefined),
        }
      : media.seconds
        ? { seconds: media.seconds }
        : {}),
  };
}

/** Statuses (24 h stories, spec 4.5), always to `status@broadcast`. */
export function statusRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/message', tag: 'Messages', maxBodyBytes: deps.maxBodyBytes });
  const idempotent = idempotency();
  nameRequired(api, 'post', '/status', deps.auth);

  api.route(
    {
      method: 'post',
      path: '/status/:instance',
      idempotency: idempotent,
      summary: 'Publish a status (24-hour story): text, image, video or audio',
      auth: requireInstance(deps.store, deps.auth),
      body: statusBody,
      responses: { 200: 'Status published successfully: `{status: "sent", data: {messageId, …}}`' },
    },
    async (ctx, { body: b }) => {
      const type = STATUS_TYPES.find((t) => t === b.type);
      if (!type) throw new ValidationError(`Type must be one of: ${STATUS_TYPES.join(', ')}`);
      if (!b.message) throw new ValidationError('Message is required');
      if (type !== 'text' && !b.mediaUrl) throw new ValidationError(`MediaURL is required for type: ${type}`);
      const instance = ctx.state.instance!;
      const payload: StatusPayload = { type, text: b.message };
      if (type === 'text') {
        if (b.backgroundColor) payload.backgroundColor = colour(b.backgroundColor);
        if (b.font !== undefined) payload.font = font(b.font);
      }
      assertConnected(instance, 'disconnected');
      if (type !== 'text') payload.media = await statusMedia(type, b, deps, ctx.state.log);
      const result = await disconnectedWhenNotConnected(() =>
        deps.actors.for(ctx).call(instance.id, 'status.publish', payload),
      );
      ctx.body = {
        success: true,
        message: 'Status published successfully',
        status: 'sent',
        data: {
          messageId: result.messageId,
          direction: 'outgoing',
          messageType: type,
          content: b.message,
          source: b.source || 'api',
          timestamp: new Date(result.timestamp).toISOString(),
          chat: { jid: 'status@broadcast', isGroup: false },
          sender: { jid: result.senderJid, instance: instance.name },
        },
      };
    },
  );

  return api;
}
