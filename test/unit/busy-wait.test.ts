import { expect } from 'chai';
import { waitOutBusy } from '../../src/store/sqlite/busy-wait.js';

const busy = () => Object.assign(new Error('database is locked'), { code: 'SQLITE_BUSY' });

describe('waitOutBusy: a call that found the SQLite file locked is tried again', () => {
  it('tries a busy call again until it answers, and only then', async () => {
    let calls = 0;
    const repo = waitOutBusy(
      {
        async write(x: number) {
          calls++;
          if (calls < 3) throw busy();
          return x * 2;
        },
      },
      1000,
    );
    expect(await repo.write(21)).to.equal(42);
    expect(calls).to.equal(3);
  });

  it('passes any other error on at once: a refused write is never tried again', async () => {
    let calls = 0;
    const repo = waitOutBusy(
      {
        async write() {
          calls++;
          throw Object.assign(new Error('constraint'), { code: 'SQLITE_CONSTRAINT_UNIQUE' });
        },
      },
      1000,
    );
    const err = (await repo.write().catch((e: unknown) => e)) as { code: string };
    expect(err.code).to.equal('SQLITE_CONSTRAINT_UNIQUE');
    expect(calls).to.equal(1);
  });

  it('gives the busy error back once the budget is spent', async () => {
    let calls = 0;
    const repo = waitOutBusy(
      {
        async write() {
          calls++;
          throw busy();
        },
      },
      60,
    );
    const started = performance.now();
    const err = (await repo.write().catch((e: unknown) => e)) as { code: string };
    expect(err.code).to.equal('SQLITE_BUSY');
    expect(performance.now() - started).to.be.below(200);
    expect(calls).to.be.within(2, 6);
  });
});
