import { expect } from 'chai';
import { pino } from 'pino';
import { sharedChecks } from '../../src/http/routes/health-routes.js';

describe('sharedChecks (GET /health)', () => {
  const log = pino({ level: 'silent' });

  it('runs one round per period: requests within it share the round, a later one starts the next', async () => {
    let now = 0;
    let runs = 0;
    let up = true;
    const checks = sharedChecks(
      [
        {
          name: 'store',
          check: async () => {
            runs++;
            if (!up) throw new Error('down');
          },
        },
      ],
      250,
      () => now,
    );
    const [a, b] = await Promise.all([checks(log), checks(log)]);
    expect(a).to.deep.equal([['store', 'ok']]);
    expect(b).to.equal(a);
    now = 249;
    up = false;
    expect(await checks(log)).to.deep.equal([['store', 'ok']]);
    expect(runs).to.equal(1);
    now = 250;
    expect(await checks(log)).to.deep.equal([['store', 'down']]);
    expect(runs).to.equal(2);
  });
});
