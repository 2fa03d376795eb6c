import { expect } from 'chai';
import { TtlCache } from '../../../src/msgnet/baileys/ttl-cache.js';

describe('TtlCache (shared Baileys CacheStore)', () => {
  it('expires entries after their TTL without any timer', () => {
    let now = 0;
    const cache = new TtlCache({ ttlMs: 100, maxEntries: 10, now: () => now });
    cache.set('a', 1);
    now = 99;
    expect(cache.get<number>('a')).to.equal(1);
    now = 100;
    expect(cache.get('a')).to.equal(undefined);
    expect(cache.size).to.equal(0);
  });

  it('evicts the oldest entries beyond maxEntries, counting a re-set as new', () => {
    const cache = new TtlCache({ ttlMs: 1_000, maxEntries: 2 });
    cache.set('a', 1);
    cache.set('b', 2);
    cache.set('a', 3);
    cache.set('c', 4);
    expect(cache.get('b')).to.equal(undefined);
    expect(cache.get('a')).to.equal(3);
    expect(cache.get('c')).to.equal(4);
  });

  it('supports the bulk calls Baileys uses for device lists, del and flushAll', async () => {
    const cache = new TtlCache({ ttlMs: 1_000, maxEntries: 10 });
    cache.mset([
      { key: 'u1', value: ['0'] },
      { key: 'u2', value: ['0', '1'] },
    ]);
    expect(await cache.mget(['u1', 'u2', 'u3'])).to.deep.equal({ u1: ['0'], u2: ['0', '1'], u3: undefined });
    cache.mdel(['u1']);
    cache.del('u2');
    expect(cache.size).to.equal(0);
    cache.set('x', 1);
    cache.flushAll();
    expect(cache.get('x')).to.equal(undefined);
  });
});
