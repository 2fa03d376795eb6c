import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { resolveMediaTools } from './media-tools.js';
import type { MediaTool } from './media-tools.js';
import { NamedError } from '../errors.js';

/** ffmpeg or ffprobe failed: `missing` when the program is not installed (an operator's problem, not the client's). */
export class ToolError extends NamedError {
  constructor(
    readonly tool: string,
    message: string,
    readonly missing = false,
  ) {
    super(message);
  }
}

export interface ToolLimits {
  timeoutMs: number;
  /** Standard output beyond this kills the tool. */
  maxOutputBytes: number;
}

/** Runs ffmpeg or ffprobe without a shell and returns its standard output. */
export async function runTool(tool: MediaTool, args: string[], limits: ToolLimits): Promise<Buffer> {
  const { command } = (await resolveMediaTools())[tool];
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let size = 0;
    let stderr = '';
    let failure: ToolError | undefined;
    const kill = (message: string) => {
      failure ??= new ToolError(tool, message);
      child.kill('SIGKILL');
    };
    const timer = setTimeout(() => kill(`${tool} took longer than ${limits.timeoutMs} ms`), limits.timeoutMs);
    child.stdout.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > limits.maxOutputBytes) kill(`${tool} produced more than ${limits.maxOutputBytes} bytes`);
      else out.push(chunk);
    });
    // Only the tail matters (the error); ffmpeg can be chatty.
    child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString()).slice(-2000)));
    child.once('error', (err: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      reject(
        err.code === 'ENOENT'
          ? new ToolError(tool, `${tool} is not installed`, true)
          : new ToolError(tool, err.message),
      );
    });
    child.once('close', (code) => {
      clearTimeout(timer);
      if (failure) reject(failure);
      else if (code !== 0) reject(new ToolError(tool, lastLine(stderr) || `${tool} exited with code ${code}`));
      else resolve(Buffer.concat(out, size));
    });
  });
}

function lastLine(text: string): string {
  return text.trim().split('\n').pop()?.trim() ?? '';
}

/** Writes the bytes to a private temporary directory for the tools (MP4 and M4A need a seekable input). */
export async function withTempFile<T>(bytes: Buffer, fn: (path: string, dir: string) => Promise<T>): Promise<T> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-media-'));
  try {
    const path = join(dir, 'input');
    await writeFile(path, bytes, { mode: 0o600 });
    return await fn(path, dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export interface MediaProbe {
  /** ffprobe's container name list, e.g. `ogg` or `mov,mp4,m4a,3gp,3g2,mj2`. */
  format: string;
  durationSeconds: number | undefined;
  audioCodec: string | undefined;
  videoCodec: string | undefined;
}

interface ProbeJson {
  format?: { format_name?: string; duration?: string };
  streams?: { codec_type?: string; codec_name?: string; duration?: string; disposition?: { attached_pic?: number } }[];
}

const PROBE_LIMITS: ToolLimits = { timeoutMs: 20_000, maxOutputBytes: 1024 * 1024 };

/** What the container holds, from ffprobe. @throws ToolError when ffprobe cannot read it. */
export async function probeMedia(path: string): Promise<MediaProbe> {
  const raw = await runTool(
    'ffprobe',
    ['-v', 'error', '-print_format', 'json', '-show_format', '-show_streams', path],
    PROBE_LIMITS,
  );
  const json = JSON.parse(raw.toString('utf8')) as ProbeJson;
  const streams = json.streams ?? [];
  const audio = streams.find((s) => s.codec_type === 'audio');
  // Cover art inside an audio file is a "video" stream with the attached_pic disposition.
  const video = streams.find((s) => s.codec_type === 'video' && !s.disposition?.attached_pic);
  const duration = Number(json.format?.duration ?? audio?.duration ?? video?.duration);
  return {
    format: json.format?.format_name ?? '',
    durationSeconds: Number.isFinite(duration) && duration > 0 ? duration : undefined,
    audioCodec: audio?.codec_name,
    videoCodec: video?.codec_name,
  };
}
