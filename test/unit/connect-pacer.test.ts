import { expect } from 'chai';
import { ConnectPacer, OVERLOAD_RECHECK_MS, WHATSAPP_WEB_LADDER_MS } from '../../src/msgnet/connect-pacer.js';
import { LoginLimiter, seededRandom } from '../../simulator/server/faults.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** A pacer on a manual clock that records when each login left, and which. */
function pacer(ratePerSecond: number, seed = 7, overloaded?: () => boolean) {
  const clock = new ManualClock();
  const p = new ConnectPacer({
    ratePerSecond,
    clock,
    random: seededRandom(seed),
    ...(overloaded ? { overloaded } : {}),
  });
  const grants: { key: string; at: number }[] = [];
  const ask = (key: string, priority = 0) => p.request(priority, () => grants.push({ key, at: clock.now() }));
  return { clock, p, grants, ask };
}

/** The most logins that left within any window of `ms`. */
function busiestWindow(times: number[], ms: number): number {
  let most = 0;
  for (let i = 0, j = 0; j < times.length; j++) {
    while (times[j]! - times[i]! >= ms) i++;
    most = Math.max(most, j - i + 1);
  }
  return most;
}

describe('ConnectPacer: the logins of one node, paced', () => {
  it('holds logins back while the node is overloaded, and goes on at the rate without a burst once it is not', async () => {
    let busy = false;
    const { clock, p, grants, ask } = pacer(5, 7, () => busy);
    for (let i = 0; i < 20; i++) ask(`i${i}`);
    await clock.advance(1000);
    const before = grants.length;
    expect(before).to.be.within(4, 6);
    busy = true;
    await clock.advance(10_000);
    expect(grants, 'no login while overloaded').to.have.length(before);
    expect(p.heldBack).to.be.at.least(10_000 / OVERLOAD_RECHECK_MS - 1);
    busy = false;
    const resumedAt = clock.now();
    await clock.advance(1000);
    const after = grants.filter((g) => g.at >= resumedAt).map((g) => g.at);
    expect(after.length, 'goes on once caught up').to.be.at.least(4);
    expect(busiestWindow(after, 1000), 'no saved-up burst').to.be.at.most(6);
    await clock.advance(10_000);
    expect(grants).to.have.length(20);
  });

  it('lets N logins out at the rate: all within N / rate seconds, no second holding more than rate + 1', async () => {
    const { clock, grants, ask } = pacer(5);
    for (let i = 0; i < 100; i++) ask(`i${i}`);
    await clock.advance(20_000);
    expect(grants).to.have.length(100);
    const times = grants.map((g) => g.at);
    expect(times.at(-1)! - times[0]!).to.be.at.most(20_000);
    expect(busiestWindow(times, 1000)).to.be.at.most(6);
  });

  it('spreads them with jitter (the gaps are not all equal) and never saves up a burst while idle', async () => {
    const { clock, grants, ask } = pacer(2);
    for (let i = 0; i < 10; i++) ask(`i${i}`);
    await clock.advance(10_000);
    const gaps = grants.slice(1).map((g, i) => g.at - grants[i]!.at);
    expect(new Set(gaps.map((g) => Math.round(g))).size).to.be.above(3);
    await clock.advance(60_000);
    for (let i = 0; i < 6; i++) ask(`late${i}`);
    await clock.advance(10_000);
    const late = grants.slice(10).map((g) => g.at);
    expect(busiestWindow(late, 1000)).to.be.at.most(3);
  });

  it('never trips a token bucket of the same rate (the simulator login limit), over 500 logins', async () => {
    for (const rate of [2, 5, 20]) {
      const { clock, grants, p } = pacer(rate, rate);
      const limiter = new LoginLimiter(() => clock.now());
      limiter.set(rate);
      let refused = 0;
      for (let i = 0; i < 500; i++) {
        p.request(0, () => {
          grants.push({ key: `${i}`, at: clock.now() });
          if (!limiter.take()) refused++;
        });
      }
      await clock.advance((500 / rate) * 1000 + 2000);
      expect(grants, `rate ${rate}`).to.have.length(500);
      expect(refused, `rate ${rate}`).to.equal(0);
    }
  });

  it('lets the lowest priority (away the longest) out first, ties in arrival order', async () => {
    const { clock, grants, ask } = pacer(10);
    ask('c', 300);
    ask('a', 100);
    ask('b1', 200);
    ask('b2', 200);
    await clock.advance(1000);
    expect(grants.map((g) => g.key)).to.deep.equal(['a', 'b1', 'b2', 'c']);
  });

  it('a refusal pauses every login of the node on WhatsApp Web’s ladder (1, 1, 2, 3 s) or longer, and halves the rate', async () => {
    const { clock, p, grants, ask } = pacer(10);
    for (let i = 0; i < 200; i++) ask(`i${i}`);
    await clock.advance(150);
    const pauses: number[] = [];
    for (const expected of WHATSAPP_WEB_LADDER_MS.slice(0, 4)) {
      const before = grants.length;
      const at = clock.now();
      p.refused();
      expect(p.state).to.equal('backing-off');
      await clock.advance(expected - 1);
      expect(grants.length, 'nothing leaves during the pause').to.equal(before);
      await clock.advance(expected * 0.25 + 1000 / p.rate + 2);
      expect(grants.length, 'the queue goes on after it').to.be.above(before);
      pauses.push(grants[before]!.at - at);
      expect(p.state).to.equal('pacing');
    }
    pauses.forEach((ms, i) => expect(ms).to.be.at.least(WHATSAPP_WEB_LADDER_MS[i]!));
    expect(p.rate).to.be.below(10);
    expect(p.refusals).to.equal(4);
  });

  it('refusals during a pause count once; a success afterwards resets the ladder and wins back the rate', async () => {
    const { clock, p, ask } = pacer(8);
    for (let i = 0; i < 100; i++) ask(`i${i}`);
    p.refused();
    p.refused();
    p.refused();
    expect(p.rate).to.equal(4);
    await clock.advance(1300);
    p.refused(); // the second step: still 1 s
    const start = clock.now();
    await clock.advance(1251);
    expect(p.state).to.equal('pacing');
    expect(clock.now() - start).to.be.below(WHATSAPP_WEB_LADDER_MS[2]!);
    for (let i = 0; i < 20; i++) p.loggedIn();
    expect(p.rate).to.equal(8);
    p.refused(); // after a success: the ladder starts over at 1 s
    await clock.advance(1251);
    expect(p.state).to.equal('pacing');
  });

  it('a cancelled request never starts; closing drops the queue', async () => {
    const { clock, p, grants, ask } = pacer(10);
    ask('a');
    const cancel = ask('b');
    ask('c');
    cancel();
    await clock.advance(1000);
    expect(grants.map((g) => g.key)).to.deep.equal(['a', 'c']);
    ask('d');
    p.close();
    ask('e');
    await clock.advance(1000);
    expect(grants.map((g) => g.key)).to.deep.equal(['a', 'c']);
    expect(p.state).to.equal('closed');
    expect(p.waiting).to.equal(0);
  });
});
