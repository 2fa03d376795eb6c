import { expect } from 'chai';
import { LoopSlicer } from '../../src/util/loop-slicer.js';

describe('LoopSlicer: long synchronous loops in slices', () => {
  it('yields only once a slice has run its length, and starts a new slice after', async () => {
    let now = 0;
    const slicer = new LoopSlicer(20, () => now);
    now = 19;
    expect(slicer.due()).to.equal(false);
    now = 20;
    expect(slicer.due()).to.equal(true);
    await slicer.yield();
    expect(slicer.due(), 'a new slice').to.equal(false);
  });

  it('lets a timer run in the middle of a loop that would otherwise hold the event loop', async () => {
    const slicer = new LoopSlicer(5);
    let fired = -1;
    setTimeout(() => (fired = i), 1);
    let i = 0;
    const until = performance.now() + 60;
    for (; performance.now() < until; i++) {
      if (slicer.due()) await slicer.yield();
    }
    expect(fired, 'the timer ran before the loop ended').to.be.greaterThan(0);
    expect(fired).to.be.lessThan(i);
  });
});
