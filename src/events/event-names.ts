/** The six instance event types of the spec (section 6). */
export const INSTANCE_EVENTS = [
  'message.exchange',
  'message.status',
  'call.update',
  'group.flow',
  'instance.state',
  'label.update',
] as const;
export type InstanceEventName = (typeof INSTANCE_EVENTS)[number];

/** Enterprise events; an instance webhook or WebSocket may list them too (spec section 6). */
export const ENTERPRISE_EVENTS = [
  'enterprise.trial.started',
  'enterprise.trial.ending',
  'enterprise.instance.billable',
  'enterprise.cycle.renewed',
  'enterprise.webhook.test',
] as const;
export type EnterpriseEventName = (typeof ENTERPRISE_EVENTS)[number];

export type EventName = InstanceEventName | EnterpriseEventName;

const known = new Set<string>([...INSTANCE_EVENTS, ...ENTERPRISE_EVENTS]);

export function isEventName(name: string): name is EventName {
  return known.has(name);
}
