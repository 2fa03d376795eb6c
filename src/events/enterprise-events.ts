/** The account webhook's events (spec section 6, Enterprise events). */
export const EnterpriseEvent = {
  TrialStarted: 'enterprise.trial.started',
  TrialEnding: 'enterprise.trial.ending',
  InstanceBillable: 'enterprise.instance.billable',
  CycleRenewed: 'enterprise.cycle.renewed',
  WebhookTest: 'enterprise.webhook.test',
} as const;
export type EnterpriseEvent = (typeof EnterpriseEvent)[keyof typeof EnterpriseEvent];

/** What an account webhook receives when its `events` were never set. */
export const DEFAULT_ENTERPRISE_EVENTS: readonly string[] = [
  EnterpriseEvent.TrialStarted,
  EnterpriseEvent.TrialEnding,
  EnterpriseEvent.InstanceBillable,
  EnterpriseEvent.CycleRenewed,
];

/** The body of every account delivery, in this key order. */
export interface EnterpriseEnvelope {
  event: string;
  account: string;
  description: string;
  data: Record<string, unknown>;
  timestamp: string;
}
