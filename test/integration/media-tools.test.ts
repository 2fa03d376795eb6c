import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { configureMediaTools } from '../../src/media/media-tools.js';

/** Chooses again under the current PATH (the choice is kept while the options stay the same). */
async function chooseAgain() {
  await configureMediaTools({ ffmpegPath: 'other' });
  return configureMediaTools({});
}

describe('media tools: which ffmpeg and ffprobe run', () => {
  const savedPath = process.env.PATH;
  let dir: string;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-tools-'));
  });
  afterEach(async () => {
    process.env.PATH = savedPath;
    rmSync(dir, { recursive: true, force: true });
    // Chosen again under the real PATH, so that no later test runs a program only this test's PATH had.
    await chooseAgain();
  });

  it('takes the configured paths as given', async () => {
    const tools = await configureMediaTools({ ffmpegPath: '/opt/ff/ffmpeg', ffprobePath: '/opt/ff/ffprobe' });
    expect(tools.ffmpeg).to.deep.equal({ command: '/opt/ff/ffmpeg', source: 'configured' });
    expect(tools.ffprobe).to.deep.equal({ command: '/opt/ff/ffprobe', source: 'configured' });
  });

  it('falls back to the static builds of the npm packages when the PATH has none', async () => {
    process.env.PATH = dir;
    const tools = await chooseAgain();
    expect(tools.ffmpeg.source).to.equal('package');
    expect(tools.ffmpeg.command).to.match(/@ffmpeg-installer\/linux-x64\/ffmpeg$/);
    expect(tools.ffprobe.source).to.equal('package');
    expect(tools.ffprobe.command).to.match(/@ffprobe-installer\/linux-x64\/ffprobe$/);
  });

  it('prefers a program on the PATH', async () => {
    process.env.PATH = dir;
    const packaged = await chooseAgain();
    symlinkSync(packaged.ffmpeg.command, join(dir, 'ffmpeg'));
    const tools = await chooseAgain();
    expect(tools.ffmpeg).to.deep.equal({ command: 'ffmpeg', source: 'path' });
    expect(tools.ffprobe.source).to.equal('package');
  });
});
