import { expect } from 'chai';
import { FAULTS, faultsFor } from '../chaos/nemesis.js';

describe('chaos: the faults a run on each Redis can inject', () => {
  it('a single Redis gets every fault but a failover (it has no replica)', () => {
    expect(faultsFor('single')).to.deep.equal(FAULTS.filter((f) => f !== 'redis-failover'));
  });

  it('a Redis Cluster or sentinels get the failover, and none of the single server and proxy faults', () => {
    for (const mode of ['cluster', 'sentinel'] as const) {
      const faults = faultsFor(mode);
      expect(faults).to.include('redis-failover');
      expect(faults).to.include.members(['kill-9', 'sigstop', 'short-pause', 'sigterm', 'join-or-leave', 'store-lock']);
      for (const f of [
        'redis-restart',
        'redis-kill',
        'redis-empty',
        'redis-pause',
        'partition-stall',
        'partition-cut',
      ]) {
        expect(faults, mode).not.to.include(f);
      }
    }
  });
});
