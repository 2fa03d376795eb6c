import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { AppError, ErrorCode } from '../errors.js';
import { probeMedia, runTool, ToolError, withTempFile } from './ffmpeg.js';
import type { MediaProbe } from './ffmpeg.js';
import { sniffMedia } from './sniff.js';

/** What WhatsApp plays as a voice note. */
export const OPUS_MIME = 'audio/ogg; codecs=opus';
/** WhatsApp draws a voice note's waveform from 64 values of 0 to 100. */
export const WAVEFORM_SAMPLES = 64;

/** Containers other clients play as plain audio without conversion. */
const PLAYABLE = new Set(['audio/mpeg', 'audio/mp4', 'audio/aac', 'audio/ogg; codecs=opus']);
// Enough samples for 64 peaks of a long recording, few enough to keep the PCM small.
const PCM_SAMPLES_TARGET = 2_000_000;
const CONVERT_TIMEOUT_MS = 120_000;

export interface PreparedAudio {
  data: Buffer;
  mimetype: string;
  /** Whole seconds, at least 1. */
  seconds: number;
  waveform: Uint8Array;
  converted: boolean;
}

const conversionFailed = (reason: string) =>
  new AppError(ErrorCode.AudioConversionFailed, `Failed to convert audio: ${reason}`);
const notAudio = (reason: string) =>
  new AppError(ErrorCode.MediaValidationFailed, `The media is not playable audio: ${reason}`);

async function probe(path: string): Promise<MediaProbe> {
  try {
    return await probeMedia(path);
  } catch (err) {
    if (err instanceof ToolError && err.missing) throw conversionFailed(err.message);
    throw notAudio(err instanceof ToolError ? err.message : String(err));
  }
}

/**
 * Audio ready to send: converted to Ogg/Opus with ffmpeg when `opus` is asked (voice notes, statuses) and
 * it is not Opus already, or when other clients could not play its container; with its duration (ffprobe)
 * and a waveform computed from the decoded samples.
 * @throws AppError `media_validation_failed` when the media holds no audio, `audio_conversion_failed`
 *   when ffmpeg cannot convert it (or is not installed).
 */
export async function prepareAudio(bytes: Buffer, o: { opus: boolean; maxBytes: number }): Promise<PreparedAudio> {
  return withTempFile(bytes, async (input, dir) => {
    const source = await probe(input);
    if (!source.audioCodec) throw notAudio('it has no audio stream');
    const sniffed = sniffMedia(bytes);
    const isOpus = source.audioCodec === 'opus' && source.format.split(',').includes('ogg');
    const keep = isOpus || (!o.opus && sniffed?.kind === 'audio' && PLAYABLE.has(sniffed.mime));
    let path = input;
    let probed = source;
    if (!keep) {
      path = join(dir, 'output.ogg');
      await convertToOpus(input, path);
      probed = await probe(path);
    }
    const data = keep ? bytes : await readFile(path);
    if (data.length > o.maxBytes) throw conversionFailed(`the converted audio is larger than ${o.maxBytes} bytes`);
    const duration = probed.durationSeconds ?? 0;
    return {
      data,
      mimetype: keep ? (isOpus ? OPUS_MIME : sniffed!.mime) : OPUS_MIME,
      seconds: Math.max(1, Math.round(duration)),
      waveform: await waveformOfFile(path, duration),
      converted: !keep,
    };
  });
}

async function convertToOpus(input: string, output: string): Promise<void> {
  try {
    await runTool(
      'ffmpeg',
      [
        '-v',
        'error',
        '-nostdin',
        '-y',
        '-i',
        input,
        '-vn',
        '-map_metadata',
        '-1',
        '-ac',
        '1',
        '-ar',
        '48000',
        '-c:a',
        'libopus',
        '-b:a',
        '32k',
        '-application',
        'voip',
        '-f',
        'ogg',
        output,
      ],
      { timeoutMs: CONVERT_TIMEOUT_MS, maxOutputBytes: 64 * 1024 },
    );
  } catch (err) {
    throw conversionFailed((err as Error).message);
  }
}

/** Decodes to mono 16-bit PCM at a rate that keeps the samples around two million, then takes the peaks. */
async function waveformOfFile(path: string, durationSeconds: number): Promise<Uint8Array> {
  const rate = Math.min(8000, Math.max(100, Math.floor(PCM_SAMPLES_TARGET / Math.max(durationSeconds, 1))));
  try {
    const pcm = await runTool(
      'ffmpeg',
      [
        '-v',
        'error',
        '-nostdin',
        '-i',
        path,
        '-vn',
        '-ac',
        '1',
        '-ar',
        String(rate),
        '-f',
        's16le',
        '-acodec',
        'pcm_s16le',
        'pipe:1',
      ],
      {
        timeoutMs: CONVERT_TIMEOUT_MS,
        maxOutputBytes: 4 * PCM_SAMPLES_TARGET,
      },
    );
    return waveformOf(pcm);
  } catch (err) {
    throw conversionFailed((err as Error).message);
  }
}

/** 64 peaks of signed 16-bit little-endian PCM, scaled so that the loudest is 100 (silence stays 0). */
export function waveformOf(pcm: Buffer): Uint8Array {
  const samples = Math.floor(pcm.length / 2);
  const peaks = new Array<number>(WAVEFORM_SAMPLES).fill(0);
  for (let i = 0; i < samples; i++) {
    const bucket = Math.min(WAVEFORM_SAMPLES - 1, Math.floor((i * WAVEFORM_SAMPLES) / samples));
    const v = Math.abs(pcm.readInt16LE(i * 2));
    if (v > peaks[bucket]!) peaks[bucket] = v;
  }
  const loudest = Math.max(...peaks);
  return Uint8Array.from(peaks, (p) => (loudest === 0 ? 0 : Math.round((100 * p) / loudest)));
}
