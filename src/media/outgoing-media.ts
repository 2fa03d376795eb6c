import { AppError, ErrorCode, InternalError } from '../errors.js';
import { prepareAudio } from './audio.js';
import { probeMedia, ToolError, withTempFile } from './ffmpeg.js';
import { ImageRejectedError, toJpeg, toSticker } from './image.js';
import { sniffMedia } from './sniff.js';
import type { MediaClass } from './sniff.js';

/** Status videos last "about 30 seconds" (spec 8); a container may round a 30 s clip up a little. */
export const STATUS_VIDEO_MAX_SECONDS = 30;
const VIDEO_TOLERANCE_SECONDS = 0.5;
/** Containers WhatsApp clients play; others (WebM, MKV, AVI, QuickTime) would need transcoding. */
const PLAYABLE_VIDEO = new Set(['video/mp4', 'video/3gpp']);
// Images are re-encoded, which also drops metadata such as the GPS position of a photo.
const IMAGE_QUALITY = 90;

export interface PreparedMedia {
  kind: MediaClass;
  data: Buffer;
  mimetype: string;
  fileName?: string;
  seconds?: number;
  waveform?: Uint8Array;
}

export interface PrepareOptions {
  /** The type the client named (`mimeType`, Content-Type); only its top-level type is checked. */
  declaredMime?: string;
  fileName?: string;
  /** Audio must be Ogg/Opus (voice notes and statuses). */
  opusAudio: boolean;
  /** Longer videos are refused. */
  maxVideoSeconds?: number;
  maxBytes: number;
}

const invalid = (message: string) => new AppError(ErrorCode.MediaValidationFailed, message);
const unsupported = (message: string) => new AppError(ErrorCode.UnsupportedMediaType, message);

/**
 * Checks that the bytes are media of the asked kind (sniffed, never trusted from names) and makes them
 * sendable: images re-encoded as JPEG within the pixel limit, videos checked for container and length,
 * audio converted to Opus when needed with its duration and waveform.
 * @throws AppError `media_validation_failed`, `unsupported_media_type`, `audio_conversion_failed`
 */
export async function prepareMedia(kind: MediaClass, bytes: Buffer, o: PrepareOptions): Promise<PreparedMedia> {
  const declaredKind = o.declaredMime?.split('/')[0]?.toLowerCase();
  if (kind !== 'document' && o.declaredMime && declaredKind !== kind) {
    throw invalid(`mimeType ${o.declaredMime} does not match type ${kind}`);
  }
  const sniffed = sniffMedia(bytes);
  switch (kind) {
    case 'image':
      return { kind, ...(await image(bytes)), mimetype: 'image/jpeg' };
    case 'video':
      return video(bytes, sniffed?.kind === 'video' ? sniffed.mime : undefined, o.maxVideoSeconds);
    case 'audio': {
      if (sniffed && sniffed.kind !== 'audio' && sniffed.kind !== 'video') {
        throw invalid(`The media is not audio (${sniffed.mime})`);
      }
      const audio = await prepareAudio(bytes, { opus: o.opusAudio, maxBytes: o.maxBytes });
      return { kind, data: audio.data, mimetype: audio.mimetype, seconds: audio.seconds, waveform: audio.waveform };
    }
    case 'document':
      return {
        kind,
        data: bytes,
        mimetype: o.declaredMime ?? sniffed?.mime ?? 'application/octet-stream',
        fileName: o.fileName ?? 'document',
      };
  }
}

/** An image made a sticker (WebP, 512×512). @throws AppError `media_validation_failed`, `unsupported_media_type` */
export async function prepareSticker(bytes: Buffer): Promise<{ data: Buffer; mimetype: 'image/webp' }> {
  try {
    return { data: await toSticker(bytes), mimetype: 'image/webp' };
  } catch (err) {
    throw imageRefusal(err);
  }
}

async function image(bytes: Buffer): Promise<{ data: Buffer }> {
  try {
    return { data: (await toJpeg(bytes, { quality: IMAGE_QUALITY })).data };
  } catch (err) {
    throw imageRefusal(err);
  }
}

/** An image conversion's failure as the send endpoints word it. */
function imageRefusal(err: unknown): unknown {
  if (!(err instanceof ImageRejectedError)) return err;
  if (err.problem === 'unsupported') return unsupported(err.message);
  if (err.problem === 'not_image') return invalid('The media is not an image');
  return invalid(err.problem === 'corrupt' ? `The image could not be decoded: ${err.message}` : err.message);
}

async function video(bytes: Buffer, mime: string | undefined, maxSeconds: number | undefined): Promise<PreparedMedia> {
  if (!mime) throw invalid('The media is not a video');
  if (!PLAYABLE_VIDEO.has(mime)) throw unsupported(`${mime} is not supported; send MP4 (H.264)`);
  const probe = await withTempFile(bytes, (path) => probeMedia(path)).catch((err: unknown) => {
    if (err instanceof ToolError && err.missing) throw new InternalError(err.message);
    throw invalid(`The video could not be read: ${(err as Error).message}`);
  });
  if (!probe.videoCodec) throw invalid('The media has no video stream');
  const seconds = probe.durationSeconds;
  if (maxSeconds !== undefined && seconds !== undefined && seconds > maxSeconds + VIDEO_TOLERANCE_SECONDS) {
    throw invalid(`The video lasts ${seconds.toFixed(1)} s; at most ${maxSeconds} s are allowed`);
  }
  return { kind: 'video', data: bytes, mimetype: mime, ...(seconds ? { seconds: Math.round(seconds) } : {}) };
}
