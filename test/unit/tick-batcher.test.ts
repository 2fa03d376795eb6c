import { expect } from 'chai';
import { TickBatcher } from '../../src/util/tick-batcher.js';
import { settle } from '../helpers/manual-clock.js';

class Refused extends Error {}

describe('TickBatcher', () => {
  it('writes the items added during one turn with one call, and resolves each after it', async () => {
    const writes: number[][] = [];
    const batcher = new TickBatcher<number>(async (items) => {
      writes.push(items);
    });
    const added = [1, 2, 3].map((n) => batcher.add(n));
    expect(writes).to.deep.equal([]);
    await Promise.all(added);
    await batcher.add(4);
    expect(writes).to.deep.equal([[1, 2, 3], [4]]);
  });

  it('rejects every member of a failed batch when the error is not one to retry alone', async () => {
    let calls = 0;
    const batcher = new TickBatcher<number>(async () => {
      calls++;
      throw new Refused('down');
    });
    const results = await Promise.allSettled([batcher.add(1), batcher.add(2)]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(calls).to.equal(1);
  });

  it('writes the members of a failed batch one by one, so a bad member fails alone', async () => {
    const written: number[] = [];
    const batcher = new TickBatcher<number>(
      async (items) => {
        if (items.includes(2)) throw new Refused('2 is refused');
        written.push(...items);
      },
      { retryAlone: (err) => err instanceof Refused },
    );
    const results = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    expect(written).to.deep.equal([1, 3]);
  });

  it('settles each member by its own entry when the write answers per item', async () => {
    const batcher = new TickBatcher<number>(async (items) =>
      items.map((n) => (n % 2 ? undefined : new Refused(`${n}`))),
    );
    const results = await Promise.allSettled([1, 2, 3].map((n) => batcher.add(n)));
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
  });

  it('drain writes what is gathered at once and waits for the writes begun', async () => {
    const writes: number[][] = [];
    // A write that takes a few turns of the event loop (I/O), as a store's does.
    const batcher = new TickBatcher<number>(async (items) => {
      for (let i = 0; i < 3; i++) await settle();
      writes.push(items);
    });
    const added = batcher.add(1);
    await batcher.drain();
    expect(writes).to.deep.equal([[1]]);
    await added;
    await batcher.drain();
  });
});
