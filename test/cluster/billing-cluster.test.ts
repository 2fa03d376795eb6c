import { expect } from 'chai';
import { periodCharge } from '../../src/billing/billing-plan.js';
import type { BillingTerms } from '../../src/billing/billing-plan.js';
import { verifySignature } from '../helpers/signature.js';
import { WebhookReceiver } from '../helpers/webhook-receiver.js';
import type { Received } from '../helpers/webhook-receiver.js';
import { ClusterFixture, sleep } from './cluster-fixture.js';
import { CLUSTER_ADMIN_TOKEN } from './node-process.js';

const S = 1000;
const ROLE = 'singleton:billing-cron';
const INSTANCES = ['bc-1', 'bc-2', 'bc-3'];
const INSTANCE_EVENTS = ['enterprise.trial.started', 'enterprise.trial.ending', 'enterprise.instance.billable'];
const TERMS: BillingTerms = {
  trial: { months: 0, ms: 4 * S },
  trialNotice: { months: 0, ms: 2 * S },
  cycle: { months: 0, ms: 4 * S },
  baseCents: 1000,
  instanceMonthlyCents: 3000,
};

/** What makes an event unique: the event and its instance, or its period for renewals. */
const keyOf = (r: Received): string => `${r.body.event}|${r.body.data.instance ?? r.body.data.periodStart}`;

describe('cluster: billing cron singleton across 3 processes', function () {
  this.timeout(120_000);
  let c: ClusterFixture;
  let receiver: WebhookReceiver;

  before(async function () {
    this.timeout(60_000);
    receiver = await WebhookReceiver.start();
    c = await ClusterFixture.start(3, {
      ALLOW_PRIVATE_URLS: 'true',
      RATE_LIMIT_PER_MINUTE: '100000',
      RATE_LIMIT_CREATE_PER_MINUTE: '100000',
      // node-cron every second (its finest resolution), as a deployment would configure it.
      BILLING_CRON: '* * * * * *',
      BILLING_TRIAL: '4s',
      BILLING_TRIAL_NOTICE: '2s',
      BILLING_CYCLE: '4s',
      BILLING_BASE_CENTS: String(TERMS.baseCents),
      BILLING_INSTANCE_MONTHLY_CENTS: String(TERMS.instanceMonthlyCents),
      WEBHOOK_RETRY_BASE_MS: '100',
      WEBHOOK_RETRY_MAX_MS: '500',
    });
  });

  after(async () => {
    await c?.stop();
    await receiver?.stop();
  });

  it('kill -9 of the holder mid-cycle: another node takes the role and every event arrives exactly once', async () => {
    const api = c.nodes[0]!.api;
    const created = await api.post('/api/admin/accounts', { name: 'billing-cluster' }, { token: CLUSTER_ADMIN_TOKEN });
    expect(created.status, created.text).to.equal(201);
    const token = created.body.account.token as string;
    const configured = await api.request('PATCH', '/api/account/webhook', { url: receiver.url }, { token });
    expect(configured.status, configured.text).to.equal(200);
    const secret = configured.body.secret as string;
    for (const name of INSTANCES) {
      expect((await api.post('/api/instance/new', { name }, { token })).status).to.equal(201);
    }

    // Mid-cycle: the trials have started, nothing has ended yet.
    const started = () => receiver.events('enterprise.trial.started').length === INSTANCES.length;
    for (let i = 0; !started(); i++) {
      if (i > 100) {
        throw new Error(`trial.started not delivered: ${JSON.stringify(receiver.received.map((r) => r.body))}`);
      }
      await sleep(50);
    }
    const [holderId] = await c.owners([ROLE]);
    const holder = c.nodes.find((n) => n.nodeId === holderId);
    expect(holder, `owner of ${ROLE}: ${holderId}`).to.not.equal(undefined);
    await holder!.kill9();
    c.remove(holder!);

    // Another live node takes the role.
    let successor: string | undefined;
    for (let i = 0; i < 200 && !(successor && successor !== holderId); i++) {
      [successor] = await c.owners([ROLE]);
      if (successor === holderId || !successor) await sleep(50);
    }
    expect(c.nodes.map((n) => n.nodeId)).to.include(successor);

    const account = (await c.store.accounts.findByName('billing-cluster'))!;
    const instances = await c.store.instances.listByAccount(account.id);
    const createdAt = Date.parse(account.createdAt);
    // Three whole periods, plus time for the delivery of the last one.
    const until = createdAt + 3 * TERMS.cycle.ms + 3 * S;
    const deadline = until + 40 * S;
    const complete = () =>
      INSTANCE_EVENTS.every((e) => receiver.events(e).length >= INSTANCES.length) &&
      receiver.events('enterprise.cycle.renewed').length >= 3;
    while (Date.now() < until || (!complete() && Date.now() < deadline)) await sleep(100);
    await sleep(1000);

    // Emission is exactly once (one delivery id per event); delivery is at least once, so a POST cut
    // short by the kill may arrive again under the same delivery id: those repeats are not duplicates.
    const byDelivery = new Map<string, Received>();
    for (const r of receiver.received) {
      if (r.body?.event !== undefined) byDelivery.set(String(r.headers['x-switchboard-delivery']), r);
    }
    const events = [...byDelivery.values()];
    const seen = new Map<string, number>();
    for (const r of events) seen.set(keyOf(r), (seen.get(keyOf(r)) ?? 0) + 1);
    expect(
      [...seen].filter(([, n]) => n > 1),
      'events emitted twice',
    ).to.deep.equal([]);
    const ofType = (e: string) => events.filter((r) => r.body.event === e);
    for (const e of INSTANCE_EVENTS) {
      expect(
        ofType(e)
          .map((r) => r.body.data.instance)
          .sort(),
        e,
      ).to.deep.equal(INSTANCES);
    }
    const renewals = ofType('enterprise.cycle.renewed')
      .map((r) => r.body.data)
      .sort((a, b) => a.periodStart.localeCompare(b.periodStart));
    expect(renewals.length).to.be.at.least(3);
    renewals.forEach((data, k) => {
      expect(Date.parse(data.periodStart), `period ${k}`).to.equal(createdAt + k * TERMS.cycle.ms);
      expect(data).to.deep.equal(
        periodCharge(instances, Date.parse(data.periodStart), Date.parse(data.periodEnd), TERMS),
      );
      expect(data.amountChargedCents).to.equal(data.baseCents + data.overageCents);
    });
    for (const r of events) expect(verifySignature(r, secret), keyOf(r)).to.equal(true);
  });
});
