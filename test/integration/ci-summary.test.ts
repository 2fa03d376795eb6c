import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect } from 'chai';

/**
 * CI's closing line (`.ci/test-summary`, called by `.ci/run` after the README's test command): it adds up
 * mocha's summaries of every part and never changes CI's outcome. A green run prints no "failing" line at
 * all; a summary that read that as an error once failed CI after every test had passed.
 */
const script = fileURLToPath(new URL('../../.ci/test-summary', import.meta.url));

describe('CI closing line', () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'ci-summary-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  const summarize = (log: string) => {
    const file = join(dir, `log-${Math.random().toString(36).slice(2)}`);
    writeFileSync(file, log);
    const run = spawnSync('bash', [script, file], { encoding: 'utf8' });
    return { status: run.status, out: run.stdout.trim(), err: run.stderr };
  };

  it('adds up a green run of every part (no "failing" line anywhere) and exits 0', () => {
    const log = [
      '  538 passing (40s)',
      '',
      '  644 passing (3m)',
      '  53 pending',
      '',
      '  112 passing (4m)',
      '  1 passing (1m)',
    ];
    expect(summarize(log.join('\n'))).to.deep.equal({
      status: 0,
      out: 'Tests: 1295 passed, 0 failed, 53 skipped',
      err: '',
    });
  });

  it('counts failures of a red run and still exits 0 (the test command’s status is what CI reports)', () => {
    const log = ['  10 passing (1s)', '  2 failing', '', '  1) a test:', '     Error: 3 passing expected'];
    expect(summarize(log.join('\n'))).to.deep.equal({
      status: 0,
      out: 'Tests: 10 passed, 2 failed, 0 skipped',
      err: '',
    });
  });

  it('prints zeros for an empty log (a run that stopped before mocha)', () => {
    expect(summarize('npm ERR! missing script: test\n')).to.deep.equal({
      status: 0,
      out: 'Tests: 0 passed, 0 failed, 0 skipped',
      err: '',
    });
  });

  it('is what .ci/run calls, and .ci/run keeps the test command’s own status', () => {
    const run = readFileSync(fileURLToPath(new URL('../../.ci/run', import.meta.url)), 'utf8');
    expect(run).to.match(/npm test 2>&1 \| tee "\$log" \|\| status=\$\?\n\.ci\/test-summary "\$log"\n/);
    expect(run).to.match(/exit "\$status"\s*$/);
  });
});
