import { expect } from 'chai';
import { DeadlineTimer } from '../../src/cluster/deadline-timer.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Deadlines kept the way the Router keeps its pending calls: a map swept by the one timer. */
function deadlines() {
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
  });
  const add = (id: string, inMs: number) => {
    const at = performance.now() + inMs;
    pending.set(id, at);
    timer.add(at);
  };
  return { pending, expired, timer, add };
}

describe('DeadlineTimer: one timer for many deadlines', () => {
  it('ends each deadline in its turn, also one added earlier than the armed one', async () => {
    const d = deadlines();
    d.add('late', 120);
    d.add('later', 160);
    d.add('early', 30);
    await sleep(80);
    expect(d.expired).to.deep.equal(['early']);
    await sleep(120);
    expect(d.expired).to.deep.equal(['early', 'late', 'later']);
  });

  it('never ends a deadline before it has passed', async () => {
    const d = deadlines();
    const started = performance.now();
    d.add('a', 50);
    while (d.expired.length === 0) await sleep(1);
    expect(performance.now() - started).to.be.at.least(49);
  });

  it('ends nothing for a call answered in time, and stop() disarms it', async () => {
    const d = deadlines();
    d.add('answered', 20);
    d.pending.delete('answered');
    d.add('pending', 40);
    d.timer.stop();
    await sleep(70);
    expect(d.expired).to.deep.equal([]);
  });
});
