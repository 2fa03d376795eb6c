import type { BillingConfig } from '../config/config.js';
import { addDuration } from '../config/duration.js';
import { EnterpriseEvent } from '../events/enterprise-events.js';
import type { AccountRecord, InstanceRecord } from '../store/records.js';

/** One billing event that is due, with the ledger key that makes it happen once. */
export interface DueEvent {
  key: string;
  accountId: string;
  event: string;
  description: string;
  data: Record<string, unknown>;
}

/** Completed periods further back than this are not caught up (an account older than the feature). */
export const MAX_CATCH_UP_PERIODS = 3;

const iso = (ms: number): string => new Date(ms).toISOString();

export type BillingTerms = Pick<
  BillingConfig,
  'trial' | 'trialNotice' | 'cycle' | 'baseCents' | 'instanceMonthlyCents'
>;

/** When the instance's trial ends (Unix ms). */
export function trialEndsAt(instance: InstanceRecord, terms: BillingTerms): number {
  return addDuration(Date.parse(instance.createdAt), terms.trial);
}

/** max(base, billable instance-time in the period × monthly price / period length), in cents. */
export function periodCharge(instances: InstanceRecord[], start: number, end: number, terms: BillingTerms) {
  let billableMs = 0;
  for (const i of instances) {
    const since = Math.max(trialEndsAt(i, terms), start);
    if (since < end) billableMs += end - since;
  }
  const usageCents = Math.round((billableMs / (end - start)) * terms.instanceMonthlyCents);
  const amountChargedCents = Math.max(terms.baseCents, usageCents);
  return {
    amountChargedCents,
    baseCents: terms.baseCents,
    overageCents: amountChargedCents - terms.baseCents,
    periodStart: iso(start),
    periodEnd: iso(end),
  };
}

/** One instance's trial events due at `now` (started, ending, billable), each from its creation time. */
export function instanceEvents(
  account: AccountRecord,
  i: InstanceRecord,
  now: number,
  terms: BillingTerms,
): DueEvent[] {
  const created = Date.parse(i.createdAt);
  const ends = trialEndsAt(i, terms);
  const number = i.connection.numberJid ? { numberJid: i.connection.numberJid } : {};
  const due: DueEvent[] = [];
  const push = (event: string, at: number, description: string, data: Record<string, unknown>) => {
    if (at <= now) {
      due.push({
        key: `${event}:${i.id}`,
        accountId: account.id,
        event,
        description,
        data: { instance: i.name, ...number, ...data },
      });
    }
  };
  push(EnterpriseEvent.TrialStarted, created, `The trial of instance ${i.name} started; it ends at ${iso(ends)}.`, {
    trialEndsAt: iso(ends),
  });
  push(
    EnterpriseEvent.TrialEnding,
    Math.max(created, addDuration(ends, terms.trialNotice, -1)),
    `The trial of instance ${i.name} ends at ${iso(ends)}.`,
    { trialEndsAt: iso(ends) },
  );
  push(EnterpriseEvent.InstanceBillable, ends, `Instance ${i.name} is billed from ${iso(ends)}.`, {
    billableSince: iso(ends),
  });
  return due;
}

/** The index of the last period of the account that ended at or before `now` (-1: none yet). */
function lastEndedPeriod(created: number, now: number, terms: BillingTerms): number {
  if (terms.cycle.months === 0) return Math.floor((now - created) / terms.cycle.ms) - 1;
  let k = -1;
  while (addDuration(created, terms.cycle, k + 2) <= now) k++;
  return k;
}

/**
 * Everything due for an account at `now`, oldest kind first: each instance's trial events from its
 * creation time, then each ended billing period's renewal (the last MAX_CATCH_UP_PERIODS at most).
 */
export function dueEvents(
  account: AccountRecord,
  instances: InstanceRecord[],
  now: number,
  terms: BillingTerms,
): DueEvent[] {
  return [
    ...instances.flatMap((i) => instanceEvents(account, i, now, terms)),
    ...renewalEvents(account, instances, now, terms),
  ];
}

/** The renewal of each billing period of the account that ended by `now` (the last MAX_CATCH_UP_PERIODS at most). */
export function renewalEvents(
  account: AccountRecord,
  instances: InstanceRecord[],
  now: number,
  terms: BillingTerms,
): DueEvent[] {
  const due: DueEvent[] = [];
  const created = Date.parse(account.createdAt);
  const last = lastEndedPeriod(created, now, terms);
  for (let k = Math.max(0, last - MAX_CATCH_UP_PERIODS + 1); k <= last; k++) {
    const start = addDuration(created, terms.cycle, k);
    const end = addDuration(created, terms.cycle, k + 1);
    const charge = periodCharge(instances, start, end, terms);
    due.push({
      key: `${EnterpriseEvent.CycleRenewed}:${account.id}:${charge.periodStart}`,
      accountId: account.id,
      event: EnterpriseEvent.CycleRenewed,
      description: `Renewal of account ${account.name} for ${charge.periodStart} to ${charge.periodEnd}: ${charge.amountChargedCents} cents charged.`,
      data: charge,
    });
  }
  return due;
}
