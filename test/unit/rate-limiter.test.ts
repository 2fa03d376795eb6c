import { expect } from 'chai';
import { MemoryRateLimiter } from '../../src/cluster/rate-limiter.js';

describe('MemoryRateLimiter', () => {
  it('counts per bucket in fixed windows and reports the reset time', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await limiter.hit('a', 3, 60_000));
    expect(results.map((r) => r.allowed)).to.deep.equal([true, true, true, false]);
    expect(results.map((r) => r.remaining)).to.deep.equal([2, 1, 0, 0]);
    expect(results[0]!.resetAt).to.equal(Math.ceil((1_000_000 + 60_000) / 1000));
    expect((await limiter.hit('b', 3, 60_000)).allowed).to.equal(true);
    now += 60_000;
    expect((await limiter.hit('a', 3, 60_000)).remaining).to.equal(2);
    await limiter.close();
  });
});
