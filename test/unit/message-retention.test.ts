import { expect } from 'chai';
import { startMessagePruning } from '../../src/store/message-retention.js';
import type { MessageRepository } from '../../src/store/store.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('message retention', () => {
  const recorder = () => {
    const cutoffs: number[] = [];
    const repo = { prune: async (before: number) => (cutoffs.push(before), 0) } as unknown as MessageRepository;
    return { cutoffs, repo };
  };

  it('prunes what is older than the retention, first after a pause, then on every tick, until stopped', async () => {
    const { cutoffs, repo } = recorder();
    const clock = new ManualClock();
    const stop = startMessagePruning(repo, 30, { firstAfterMs: 20, everyMs: 50 }, clock);
    await clock.advance(19);
    expect(cutoffs).to.have.length(0);
    await clock.advance(1);
    expect(cutoffs).to.have.length(1);
    await clock.advance(110);
    stop();
    expect(cutoffs).to.have.length(3);
    for (const c of cutoffs) expect(Date.now() - c).to.be.closeTo(30 * 86_400_000, 1000);
    await clock.advance(80);
    expect(cutoffs).to.have.length(3);
  });

  it('keeps everything when the retention is 0', async () => {
    const { cutoffs, repo } = recorder();
    const clock = new ManualClock();
    const stop = startMessagePruning(repo, 0, { firstAfterMs: 1, everyMs: 5 }, clock);
    await clock.advance(30);
    stop();
    expect(cutoffs).to.deep.equal([]);
  });
});
