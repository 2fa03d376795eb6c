import { expect } from 'chai';
import { loadConfig } from '../../src/config/config.js';
import { addDuration, parseDuration } from '../../src/config/duration.js';

describe('billing durations', () => {
  it('parses the short forms and refuses the rest', () => {
    expect(parseDuration('90s')).to.deep.equal({ months: 0, ms: 90_000 });
    expect(parseDuration('24h')).to.deep.equal({ months: 0, ms: 86_400_000 });
    expect(parseDuration('7d')).to.deep.equal({ months: 0, ms: 604_800_000 });
    expect(parseDuration('1mo')).to.deep.equal({ months: 1, ms: 0 });
    for (const bad of ['', '0s', '7', 'd7', '1.5h', '-1d']) expect(parseDuration(bad), bad).to.equal(undefined);
  });

  it('adds calendar months clamped to the month end, and goes back', () => {
    const jan31 = Date.parse('2024-01-31T10:00:00.000Z');
    expect(new Date(addDuration(jan31, { months: 1, ms: 0 })).toISOString()).to.equal('2024-02-29T10:00:00.000Z');
    expect(new Date(addDuration(jan31, { months: 1, ms: 0 }, 2)).toISOString()).to.equal('2024-03-31T10:00:00.000Z');
    expect(addDuration(jan31, { months: 0, ms: 1000 }, -1)).to.equal(jan31 - 1000);
  });

  it('configures billing with defaults and refuses bad values in one line', () => {
    const c = loadConfig({}).billing;
    expect(c).to.deep.equal({
      trial: { months: 0, ms: 604_800_000 },
      trialNotice: { months: 0, ms: 86_400_000 },
      cycle: { months: 1, ms: 0 },
      baseCents: 0,
      instanceMonthlyCents: 0,
      cron: '* * * * *',
      tickMs: undefined,
    });
    expect(() => loadConfig({ BILLING_TRIAL: 'soon' })).to.throw(/BILLING_TRIAL must be a duration/);
    expect(() => loadConfig({ BILLING_TICK: '1mo' })).to.throw(/BILLING_TICK must be a fixed duration/);
    expect(loadConfig({ BILLING_CRON: '*/5 * * * * *' }).billing).to.include({
      cron: '*/5 * * * * *',
      tickMs: undefined,
    });
    expect(loadConfig({ BILLING_TICK: '200ms' }).billing.tickMs).to.equal(200);
    expect(() => loadConfig({ BILLING_CRON: 'every minute' })).to.throw(/BILLING_CRON must be a cron expression/);
    expect(() => loadConfig({ BILLING_CRON: '* * * * *', BILLING_TICK: '1s' })).to.throw(/not both/);
  });
});
