import { expect } from 'chai';
import { BoundedMap, BoundedSet } from '../../src/util/bounded-map.js';

describe('BoundedMap and BoundedSet', () => {
  it('keep the last `max` entries, dropping the oldest first', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('c', 3);
    expect([...map.keys()]).to.deep.equal(['b', 'c']);
    const set = new BoundedSet<string>(2);
    set.add('a').add('b').add('c');
    expect([...set]).to.deep.equal(['b', 'c']);
  });

  it('re-setting a key that is kept does not evict another', () => {
    const map = new BoundedMap<string, number>(2);
    map.set('a', 1).set('b', 2).set('a', 3);
    expect([...map.entries()]).to.deep.equal([
      ['a', 3],
      ['b', 2],
    ]);
  });
});
