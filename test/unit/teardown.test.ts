import { expect } from 'chai';
import { pino } from 'pino';
import { Teardown } from '../../src/node/teardown.js';

describe('Teardown (a node that fails to start undoes what it started)', () => {
  it('undoes every step in reverse order, and a failing step does not stop the others', async () => {
    const done: string[] = [];
    const teardown = new Teardown();
    teardown.add('store', () => void done.push('store'));
    teardown.add('runtime', async () => {
      done.push('runtime');
      throw new Error('already gone');
    });
    teardown.add('listener', async () => void done.push('listener'));
    await teardown.run(pino({ level: 'silent' }));
    expect(done).to.deep.equal(['listener', 'runtime', 'store']);
    await teardown.run(pino({ level: 'silent' }));
    expect(done, 'each step runs once').to.have.length(3);
  });
});
