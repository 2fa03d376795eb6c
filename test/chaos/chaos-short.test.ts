import { expect } from 'chai';
import { runChaos } from './run-chaos.js';

/**
 * The short chaos run of `npm test` (about a minute, a dozen faults) so that a regression of the promise
 * shows up in CI; `npm run chaos` is the long run (docs/operations.md, "Proof under faults").
 */
describe('chaos: a short randomized fault run over real processes', function () {
  this.timeout(300_000);

  it('injects a dozen faults under load and finds no anomaly', async () => {
    const lines: string[] = [];
    const seed = Number(process.env.CHAOS_SEED ?? Math.floor(Math.random() * 2 ** 31));
    const report = await runChaos({
      driver: 'baileys',
      durationMs: 45_000,
      seed,
      nodes: 3,
      faultIntervalMs: 1000,
      instances: 3,
      workers: 2,
      quietMs: 3000,
      log: (line) => lines.push(line),
    });
    console.log(`      ${report.summary}`);
    expect(report.faults, lines.join('\n')).to.be.at.least(8);
    // Enough work for the checkers to judge; how much depends on the machine, so the bar is low.
    expect(report.operations, lines.join('\n')).to.be.at.least(40);
    expect(report.anomalies, lines.join('\n')).to.equal(0);
  });
});
