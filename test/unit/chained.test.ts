import { expect } from 'chai';
import { chained } from '../../src/http/chained.js';

describe('chained', () => {
  it('runs the steps in order, each around the rest, and the last hands on to the caller’s next', async () => {
    const seen: string[] = [];
    const run = chained<string[]>([
      async (log, next) => {
        log.push('a in');
        await next();
        log.push('a out');
      },
      (log, next) => {
        log.push('b');
        return next();
      },
    ]);
    await run(seen, async () => {
      seen.push('next');
    });
    expect(seen).to.deep.equal(['a in', 'b', 'next', 'a out']);
  });

  it('stops where a step does not call next, and passes a step’s rejection up', async () => {
    const seen: string[] = [];
    await chained<string[]>([(log) => void log.push('only')])(seen, async () => {
      seen.push('next');
    });
    expect(seen).to.deep.equal(['only']);
    const failing = chained<unknown>([
      async (_ctx, next) => next(),
      async () => {
        throw new Error('refused');
      },
    ]);
    let caught: unknown;
    await failing(undefined, async () => undefined).catch((err: unknown) => (caught = err));
    expect((caught as Error).message).to.equal('refused');
  });

  it('with no steps, is the caller’s next', async () => {
    let called = false;
    await chained<unknown>([])(undefined, async () => {
      called = true;
    });
    expect(called).to.equal(true);
  });
});
