import { expect } from 'chai';
import { DeadlineTimer } from '../../src/cluster/deadline-timer.js';
import { ManualClock } from '../helpers/manual-clock.js';

/** Deadlines kept the way the Router keeps its pending calls: a map swept by the one timer. */
function deadlines() {
  const clock = new ManualClock();
  const pending = new Map<string, number>();
  const expired: string[] = [];
  const timer = new DeadlineTimer((now) => {
    let next = Number.POSITIVE_INFINITY;
    for (const [id, at] of pending) {
      if (at - now < 1) {
        pending.delete(id);
        expired.push(id);
      } else if (at < next) next = at;
    }
    return next;
  }, clock);
  const add = (id: string, inMs: number) => {
    const at = clock.now() + inMs;
    pending.set(id, at);
    timer.add(at);
  };
  return { clock, pending, expired, timer, add };
}

describe('DeadlineTimer: one timer for many deadlines', () => {
  it('ends each deadline in its turn, also one added earlier than the armed one', async () => {
    const d = deadlines();
    d.add('late', 120);
    d.add('later', 160);
    d.add('early', 30);
    await d.clock.advance(80);
    expect(d.expired).to.deep.equal(['early']);
    await d.clock.advance(120);
    expect(d.expired).to.deep.equal(['early', 'late', 'later']);
  });

  it('never ends a deadline before it has passed', async () => {
    const d = deadlines();
    d.add('a', 50);
    await d.clock.advance(49);
    expect(d.expired).to.deep.equal([]);
    await d.clock.advance(1);
    expect(d.expired).to.deep.equal(['a']);
  });

  it('ends nothing for a call answered in time, and stop() disarms it', async () => {
    const d = deadlines();
    d.add('answered', 20);
    d.pending.delete('answered');
    d.add('pending', 40);
    d.timer.stop();
    await d.clock.advance(70);
    expect(d.expired).to.deep.equal([]);
    expect(d.clock.pending).to.equal(0);
  });
});
