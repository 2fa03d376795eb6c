import { expect } from 'chai';
import { DEPENDENCY_WAIT, backoffDelay } from '../../src/util/backoff.js';

describe('backoffDelay: the one backoff formula', () => {
  it('doubles from baseMs at each attempt and stops at maxMs', () => {
    const plain = { baseMs: 100, maxMs: 1000, jitter: 'none' } as const;
    expect([0, 1, 2, 3, 4, 5].map((a) => backoffDelay(a, plain))).to.deep.equal([100, 200, 400, 800, 1000, 1000]);
    expect(backoffDelay(10_000, plain)).to.equal(1000);
  });

  it('equal jitter: half the delay fixed, half random', () => {
    const jittered = { baseMs: 1000, maxMs: 60_000, jitter: 'equal' } as const;
    expect(backoffDelay(0, jittered, () => 0)).to.equal(500);
    expect(backoffDelay(0, jittered, () => 1)).to.equal(1000);
    expect(backoffDelay(2, jittered, () => 0.5)).to.equal(3000);
    expect(backoffDelay(500, jittered, () => 0)).to.equal(30_000);
  });

  it('no cap with maxMs Infinity (the helpdesk client bounds its retries by count)', () => {
    expect(backoffDelay(3, { baseMs: 250, maxMs: Infinity, jitter: 'equal' }, () => 1)).to.equal(2000);
  });

  it('waiting for a dependency: 100 ms doubling to 5 s, no jitter', () => {
    expect([0, 1, 5, 6, 40].map((a) => backoffDelay(a, DEPENDENCY_WAIT))).to.deep.equal([100, 200, 3200, 5000, 5000]);
  });
});
