import { expect } from 'chai';
import { startMessagePruning } from '../../src/store/message-retention.js';
import type { MessageRepository } from '../../src/store/store.js';

describe('message retention', () => {
  const recorder = () => {
    const cutoffs: number[] = [];
    const repo = { prune: async (before: number) => (cutoffs.push(before), 0) } as unknown as MessageRepository;
    return { cutoffs, repo };
  };

  it('prunes what is older than the retention, first after a pause, then on every tick, until stopped', async () => {
    const { cutoffs, repo } = recorder();
    const stop = startMessagePruning(repo, 30, { firstAfterMs: 20, everyMs: 50 });
    await new Promise((r) => setTimeout(r, 130));
    stop();
    const seen = cutoffs.length;
    expect(seen).to.be.within(2, 4);
    for (const c of cutoffs) expect(Date.now() - c).to.be.closeTo(30 * 86_400_000, 1000);
    await new Promise((r) => setTimeout(r, 80));
    expect(cutoffs).to.have.length(seen);
  });

  it('keeps everything when the retention is 0', async () => {
    const { cutoffs, repo } = recorder();
    const stop = startMessagePruning(repo, 0, { firstAfterMs: 1, everyMs: 5 });
    await new Promise((r) => setTimeout(r, 30));
    stop();
    expect(cutoffs).to.deep.equal([]);
  });
});
