import { ENTERPRISE_EVENTS } from './event-names.js';

const enterprise = new Set<string>(ENTERPRISE_EVENTS);

/**
 * Whether a webhook or WebSocket whose configured list is `events` gets an event named `name`
 * (spec section 6): a non-empty list names exactly what is sent; an empty list means every instance
 * event. The instance-level `enterprise.*` events are sent only when the list names them.
 */
export function wantsEvent(events: readonly string[], name: string): boolean {
  if (events.length > 0) return events.includes(name);
  return !enterprise.has(name);
}
