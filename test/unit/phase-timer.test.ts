import { expect } from 'chai';
import { PhaseTimer } from '../../src/util/phase-timer.js';
import { ManualClock } from '../helpers/manual-clock.js';

describe('PhaseTimer', () => {
  it('gives each phase the time since the previous mark, in order', async () => {
    const clock = new ManualClock();
    const phases = new PhaseTimer(clock);
    await clock.advance(12.34);
    phases.mark('read');
    phases.mark('judge');
    await clock.advance(700);
    phases.mark('claim');
    expect(phases.all()).to.deep.equal({ read: 12.3, judge: 0, claim: 700 });
    expect(Object.keys(phases.all())).to.deep.equal(['read', 'judge', 'claim']);
  });
});
