import { expect } from 'chai';
import { pino } from 'pino';
import { FallbackRateLimiter, MemoryRateLimiter } from '../../src/cluster/rate-limiter.js';
import type { RateLimiter } from '../../src/cluster/rate-limiter.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('MemoryRateLimiter', () => {
  it('counts per bucket in fixed windows and reports the reset time', async () => {
    let now = 1_000_000;
    const limiter = new MemoryRateLimiter(() => now);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(limiter.hit('a', 3, 60_000));
    expect(results.map((r) => r.allowed)).to.deep.equal([true, true, true, false]);
    expect(results.map((r) => r.remaining)).to.deep.equal([2, 1, 0, 0]);
    expect(results[0]!.resetAt).to.equal(Math.ceil((1_000_000 + 60_000) / 1000));
    expect(limiter.hit('b', 3, 60_000).allowed).to.equal(true);
    now += 60_000;
    expect(limiter.hit('a', 3, 60_000).remaining).to.equal(2);
    await limiter.close();
  });
});

describe('FallbackRateLimiter', () => {
  it("counts in the shared limiter, in the node's own while the shared one fails, and in the shared one again after", async () => {
    const shared = new MemoryRateLimiter();
    let down = false;
    const flaky: RateLimiter = {
      hit: (bucket, limit, windowMs) =>
        down ? Promise.reject(new Error('Connection is closed.')) : shared.hit(bucket, limit, windowMs),
      close: () => shared.close(),
    };
    const limiter = new FallbackRateLimiter(flaky, new MemoryRateLimiter(), pino({ level: 'silent' }));
    expect((await limiter.hit('t', 2, 60_000)).remaining).to.equal(1);
    down = true;
    // The local window starts fresh: limits apply per node during the outage.
    expect((await limiter.hit('t', 2, 60_000)).remaining).to.equal(1);
    expect((await limiter.hit('t', 2, 60_000)).remaining).to.equal(0);
    expect((await limiter.hit('t', 2, 60_000)).allowed).to.equal(false);
    down = false;
    const back = await limiter.hit('t', 2, 60_000);
    expect(back.remaining).to.equal(0);
    expect(back.allowed).to.equal(true);
    await limiter.close();
  });

  it('counts locally when the shared limiter does not answer in time (a hung Redis), and ignores its late failure', async () => {
    const unhandled: unknown[] = [];
    const record = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', record);
    try {
      const clock = new ManualClock();
      // Answers only after the timeout, with a failure (the connection finally drops).
      const hung: RateLimiter = {
        hit: () => clock.wait(40).then(() => Promise.reject(new Error('Connection is closed.'))),
        close: async () => undefined,
      };
      const limiter = new FallbackRateLimiter(hung, new MemoryRateLimiter(), pino({ level: 'silent' }), 10, clock);
      const answered = limiter.hit('t', 5, 60_000);
      await clock.advance(10);
      expect(await answered).to.include({ allowed: true, remaining: 4 });
      await clock.advance(70);
      expect(unhandled).to.deep.equal([]);
      await limiter.close();
    } finally {
      process.off('unhandledRejection', record);
    }
  });
});
