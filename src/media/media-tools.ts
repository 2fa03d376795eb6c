import { spawn } from 'node:child_process';
import { createRequire } from 'node:module';

/** The two programs the media pipeline runs. */
export type MediaTool = 'ffmpeg' | 'ffprobe';

/**
 * Where a program was found: `configured` (FFMPEG_PATH / FFPROBE_PATH), `path` (the system's, e.g. Debian's
 * ffmpeg in production images), `package` (the static build shipped inside an npm package, so a fresh clone
 * works after `npm ci` alone) or `missing`.
 */
export type ToolSource = 'configured' | 'path' | 'package' | 'missing';

export interface ResolvedTool {
  command: string;
  source: ToolSource;
}

export type MediaTools = Record<MediaTool, ResolvedTool>;

export interface MediaToolOptions {
  ffmpegPath?: string | undefined;
  ffprobePath?: string | undefined;
}

const PACKAGES: Record<MediaTool, string> = {
  ffmpeg: '@ffmpeg-installer/ffmpeg',
  ffprobe: '@ffprobe-installer/ffprobe',
};

let chosen: { key: string; tools: Promise<MediaTools> } | undefined;

/**
 * Chooses the programs that `runTool` runs: the configured path, else the one on the PATH, else the npm
 * package's. A node calls it at start with its configuration; the choice is kept until other options come.
 */
export function configureMediaTools(options: MediaToolOptions): Promise<MediaTools> {
  const key = `${options.ffmpegPath ?? ''}\0${options.ffprobePath ?? ''}`;
  if (chosen?.key !== key) chosen = { key, tools: resolveBoth(options) };
  return chosen.tools;
}

/** The programs chosen last (found without configuration when no node has started, as in unit tests). */
export function resolveMediaTools(): Promise<MediaTools> {
  return chosen?.tools ?? configureMediaTools({});
}

async function resolveBoth(options: MediaToolOptions): Promise<MediaTools> {
  const [ffmpeg, ffprobe] = await Promise.all([
    resolveTool('ffmpeg', options.ffmpegPath),
    resolveTool('ffprobe', options.ffprobePath),
  ]);
  return { ffmpeg, ffprobe };
}

async function resolveTool(tool: MediaTool, configured: string | undefined): Promise<ResolvedTool> {
  if (configured !== undefined) return { command: configured, source: 'configured' };
  if (await answers(tool)) return { command: tool, source: 'path' };
  const shipped = packagedBinary(tool);
  if (shipped !== undefined && (await answers(shipped))) return { command: shipped, source: 'package' };
  // Kept as the bare name so that the failure names the program ("ffmpeg is not installed").
  return { command: tool, source: 'missing' };
}

function packagedBinary(tool: MediaTool): string | undefined {
  try {
    const pkg = createRequire(import.meta.url)(PACKAGES[tool]) as { path?: unknown };
    return typeof pkg.path === 'string' ? pkg.path : undefined;
  } catch {
    // The package has no build for this platform, or is not installed (a production image uses the system's).
    return undefined;
  }
}

/** Whether `command -version` runs and exits 0. */
function answers(command: string): Promise<boolean> {
  return new Promise((resolve) => {
    const child = spawn(command, ['-version'], { stdio: 'ignore' });
    child.once('error', () => resolve(false));
    child.once('close', (code) => resolve(code === 0));
  });
}
