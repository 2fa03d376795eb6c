import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { BillingCron } from '../../src/billing/billing-cron.js';
import { periodCharge } from '../../src/billing/billing-plan.js';
import type { BillingTerms } from '../../src/billing/billing-plan.js';
import type { AccountEvent, AccountWebhookDispatcher } from '../../src/events/webhooks/account-webhook-dispatcher.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { instanceRecord } from '../helpers/records.js';
import { verifySignature } from '../helpers/signature.js';
import { startTestNode } from '../helpers/test-node.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';

const S = 1000;

describe('billing cron (Enterprise events)', () => {
  it('emits each event once, signed, with short durations', async () => {
    const node = await startTestNode({
      ALLOW_PRIVATE_URLS: 'true',
      BILLING_TRIAL: '3s',
      BILLING_TRIAL_NOTICE: '2s',
      BILLING_CYCLE: '5s',
      BILLING_TICK: '200ms',
      BILLING_BASE_CENTS: '1000',
      BILLING_INSTANCE_MONTHLY_CENTS: '3000',
    });
    const receiver = await WebhookReceiver.start();
    try {
      const token = await node.createAccount('billing');
      const { secret } = (await node.api.request('PATCH', '/api/account/webhook', { url: receiver.url }, { token }))
        .body;
      await node.createInstance(token, { name: 'b-1' });
      await new Promise((r) => setTimeout(r, 6500));
      const names = receiver.received.map((r) => r.body.event);
      expect(names.filter((n) => n === 'enterprise.trial.started')).to.have.length(1);
      expect(names.filter((n) => n === 'enterprise.trial.ending')).to.have.length(1);
      expect(names.filter((n) => n === 'enterprise.instance.billable')).to.have.length(1);
      expect(names.filter((n) => n === 'enterprise.cycle.renewed')).to.have.length(1);
      for (const r of receiver.received) expect(verifySignature(r, secret), r.body.event).to.equal(true);
      const at = (n: string) => receiver.events(n)[0]!;
      const [inst] = await node.store.instances.listByAccount((await node.store.accounts.findByName('billing'))!.id);
      const ends = new Date(Date.parse(inst!.createdAt) + 3 * S).toISOString();
      expect(at('enterprise.trial.started').body.data).to.deep.equal({ instance: 'b-1', trialEndsAt: ends });
      expect(at('enterprise.trial.ending').body.data).to.deep.equal({ instance: 'b-1', trialEndsAt: ends });
      expect(at('enterprise.instance.billable').body.data).to.deep.equal({ instance: 'b-1', billableSince: ends });
      expect(at('enterprise.trial.ending').at - at('enterprise.trial.started').at).to.be.within(500, 1800);
      expect(at('enterprise.instance.billable').at - at('enterprise.trial.started').at).to.be.within(2500, 3800);
      const renewal = at('enterprise.cycle.renewed').body;
      expect(renewal.account).to.equal('billing');
      const terms = {
        trial: { months: 0, ms: 3 * S },
        trialNotice: { months: 0, ms: 2 * S },
        cycle: { months: 0, ms: 5 * S },
        baseCents: 1000,
        instanceMonthlyCents: 3000,
      };
      const { periodStart, periodEnd } = renewal.data;
      expect(renewal.data).to.deep.equal(periodCharge([inst!], Date.parse(periodStart), Date.parse(periodEnd), terms));
      expect(renewal.data.amountChargedCents).to.equal(renewal.data.baseCents + renewal.data.overageCents);
    } finally {
      await receiver.stop();
      await node.stop();
    }
  });

  describe('ledger idempotency', () => {
    const terms: BillingTerms = {
      trial: { months: 0, ms: 3 * S },
      trialNotice: { months: 0, ms: 2 * S },
      cycle: { months: 1, ms: 0 },
      baseCents: 500,
      instanceMonthlyCents: 3100,
    };
    const t0 = Date.parse('2024-01-01T00:00:00.000Z');
    let dir: string;
    let store: SqliteStore;
    let sent: AccountEvent[];
    const dispatcher = {
      dispatch: async (e: AccountEvent) => (sent.push(e), true),
    } as unknown as AccountWebhookDispatcher;
    const cron = (holding: () => boolean = () => true, recoverAfterMs = 30_000) =>
      new BillingCron({
        store,
        dispatcher,
        terms,
        cron: '* * * * * *',
        tickMs: 1000,
        holding,
        log: pino({ level: 'silent' }),
        recoverAfterMs,
      });

    beforeEach(async () => {
      dir = mkdtempSync(join(tmpdir(), 'switchboard-billing-'));
      store = new SqliteStore(join(dir, 'store.db'));
      sent = [];
      await store.accounts.create({
        id: 'acc',
        name: 'acc',
        tokenHash: 'h',
        instanceQuota: 10,
        allowedOrigins: [],
        createdAt: new Date(t0).toISOString(),
      });
      const instance = instanceRecord('acc', {
        id: 'i-1',
        name: 'one',
        tokenHash: 'th',
        tokenSealed: 'v1:x',
        connection: {
          state: 'disconnected',
          numberJid: '5511999@s.whatsapp.net',
          updatedAt: new Date(t0).toISOString(),
        },
        createdAt: new Date(t0 + 10 * 86_400_000).toISOString(),
      });
      await store.instances.create(instance, [], 10);
    });

    afterEach(async () => {
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    });

    it('two overlapping holders emit each event once, in calendar months', async () => {
      const a = cron();
      const b = cron();
      const times = [
        t0 + 10 * 86_400_000,
        t0 + 10 * 86_400_000 + 1500,
        t0 + 10 * 86_400_000 + 3000,
        Date.parse('2024-02-01T00:00:00.000Z'),
        Date.parse('2024-03-05T00:00:00.000Z'),
      ];
      for (const t of times) await Promise.all([a.tick(t), b.tick(t), cron().tick(t)]);
      const keys = sent.map((e) => `${e.event}:${(e.data.periodStart as string | undefined) ?? ''}`);
      expect(keys).to.deep.equal([...new Set(keys)]);
      expect(sent.map((e) => e.event).sort()).to.deep.equal([
        'enterprise.cycle.renewed',
        'enterprise.cycle.renewed',
        'enterprise.instance.billable',
        'enterprise.trial.ending',
        'enterprise.trial.started',
      ]);
      const renewals = sent.filter((e) => e.event === 'enterprise.cycle.renewed').map((e) => e.data);
      expect(renewals.map((d) => [d.periodStart, d.periodEnd])).to.deep.equal([
        ['2024-01-01T00:00:00.000Z', '2024-02-01T00:00:00.000Z'],
        ['2024-02-01T00:00:00.000Z', '2024-03-01T00:00:00.000Z'],
      ]);
      // January: billable from Jan 11 + 3 s, about 21/31 of the month × 3100 = 2100 → 1600 over the base.
      expect(renewals[0]).to.include({ amountChargedCents: 2100, baseCents: 500, overageCents: 1600 });
      expect(renewals[1]).to.include({ amountChargedCents: 3100, baseCents: 500, overageCents: 2600 });
      expect(sent.find((e) => e.event === 'enterprise.trial.started')?.data).to.deep.equal({
        instance: 'one',
        numberJid: '5511999@s.whatsapp.net',
        trialEndsAt: new Date(t0 + 10 * 86_400_000 + 3000).toISOString(),
      });
    });

    it('a holder that loses the role after recording leaves the entry for the next holder, sent once', async () => {
      let checks = 0;
      const t = t0 + 10 * 86_400_000;
      // Holding for the record, lost before the delivery is queued.
      await cron(() => ++checks <= 1, 0).tick(t);
      expect(sent).to.deep.equal([]);
      await Promise.all([cron().tick(t), cron().tick(t)]);
      expect(sent.map((e) => e.event)).to.deep.equal(['enterprise.trial.started']);
      expect((await store.billingLedger.list('acc')).every((e) => e.sentAt !== undefined)).to.equal(true);
    });

    it('a holder that died between queueing and marking sent: the next queues the same delivery id and body', async () => {
      const t = t0 + 10 * 86_400_000;
      const crashing = {
        dispatch: async (e: AccountEvent) => {
          sent.push(e);
          throw new Error('killed before markSent');
        },
      } as unknown as AccountWebhookDispatcher;
      const first = new BillingCron({
        store,
        dispatcher: crashing,
        terms,
        cron: '* * * * * *',
        holding: () => true,
        log: pino({ level: 'silent' }),
        recoverAfterMs: 0,
      });
      await first.tick(t).catch(() => undefined);
      await cron(() => true, 0).tick(t + 1000);
      const [before, after] = sent.filter((e) => e.event === 'enterprise.trial.started');
      expect(after, 'queued again by the next holder').to.not.equal(undefined);
      expect(after!.id).to.be.a('string').and.to.equal(before!.id);
      expect(after!.timestamp).to.equal(before!.timestamp);
    });

    it('records the events of many instances in a few writes, each once', async () => {
      for (let i = 2; i <= 1200; i++) {
        const record = instanceRecord('acc', {
          id: `i-${i}`,
          name: `n-${i}`,
          tokenHash: `th-${i}`,
          tokenSealed: 'v1:x',
          createdAt: new Date(t0 + 10 * 86_400_000).toISOString(),
        });
        await store.instances.create(record, [], 2000);
      }
      const writes: number[] = [];
      const record = store.billingLedger.record.bind(store.billingLedger);
      store.billingLedger.record = async (entries, leaseUntil) => {
        writes.push(entries.length);
        return record(entries, leaseUntil);
      };
      // Trial started and ending are due for all 1,200 (3,600 events with billable): a write per event was
      // 3,600 transactions holding the store's file, which every node shares.
      await cron().tick(t0 + 10 * 86_400_000 + 1500);
      expect(sent.filter((e) => e.event === 'enterprise.trial.started')).to.have.length(1200);
      expect(sent.filter((e) => e.event === 'enterprise.trial.ending')).to.have.length(1200);
      expect(writes.length, `writes of ${writes.join(', ')}`).to.be.at.most(6);
      expect(writes.reduce((a, b) => a + b, 0)).to.equal(2400);
      await cron().tick(t0 + 10 * 86_400_000 + 1600);
      expect(sent).to.have.length(2400);
      expect((await store.billingLedger.list('acc')).every((e) => e.sentAt !== undefined)).to.equal(true);
    });

    it('does nothing without the role', async () => {
      await cron(() => false).tick(Date.parse('2024-06-01T00:00:00.000Z'));
      expect(sent).to.deep.equal([]);
      expect(await store.billingLedger.list('acc')).to.deep.equal([]);
    });
  });
});
