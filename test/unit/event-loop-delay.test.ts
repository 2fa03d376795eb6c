import { expect } from 'chai';
import { setTimeout as sleep } from 'node:timers/promises';
import { EventLoopDelay } from '../../src/util/event-loop-delay.js';

/** Blocks this process's event loop for `ms`, as a long synchronous task does. */
function block(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    // busy
  }
}

describe('EventLoopDelay: how late this process runs its timers (the real event loop)', () => {
  it('reports a blocked loop for at least a window, then forgets it', async () => {
    const delay = new EventLoopDelay({ sampleMs: 20, windowMs: 200 });
    delay.start();
    try {
      await sleep(100);
      expect(delay.recentMs(), 'idle').to.be.below(150);
      block(300);
      await sleep(40);
      expect(delay.recentMs(), 'right after the block').to.be.at.least(250);
      await sleep(100);
      expect(delay.recentMs(), 'within the window after it').to.be.at.least(250);
      await sleep(600);
      expect(delay.recentMs(), 'two windows later').to.be.below(150);
    } finally {
      delay.stop();
    }
  });

  it('reports each single delay past the stall threshold, and none below it', async () => {
    const stalls: number[] = [];
    const delay = new EventLoopDelay({ sampleMs: 20, windowMs: 200, stallMs: 200, onStall: (ms) => stalls.push(ms) });
    delay.start();
    try {
      await sleep(100);
      block(100);
      await sleep(60);
      expect(stalls, 'a 100 ms block is below the threshold').to.deep.equal([]);
      block(300);
      await sleep(60);
      expect(stalls).to.have.length(1);
      expect(stalls[0]).to.be.within(250, 400);
    } finally {
      delay.stop();
    }
  });
});
