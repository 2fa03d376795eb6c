import { readOwners, readProbe, staleWrites, twoOwners } from '../cluster/probe-checker.js';
import type { DueEvent } from '../../src/billing/billing-plan.js';
import type { Received } from '../helpers/webhook-receiver.js';
import type { History, Operation } from './history.js';

/** One checker's verdict: how many anomalies, and the operations involved in the first few. */
export interface Verdict {
  checker: string;
  anomalies: number;
  /** Short lines naming the operations involved (for a replay). */
  examples: string[];
}

const describe = (op: Operation) =>
  `#${op.index} ${op.process} ${op.kind} ${JSON.stringify(op.fields)} → ${op.outcome}${op.detail ? ` (${op.detail})` : ''}`;

function verdict(checker: string, found: string[]): Verdict {
  return { checker, anomalies: found.length, examples: found.slice(0, 5) };
}

/** 1. Owned writes the store accepted from an owner whose epoch was already superseded. */
export function checkStaleWrites(probeFile: string): Verdict {
  const found = staleWrites(readProbe(probeFile)).map(
    (v) =>
      `${v.instance}: epoch ${v.stale.epoch} on ${v.stale.node} accepted at ${v.stale.start} after epoch ` +
      `${v.newer.epoch} on ${v.newer.node} (${v.newer.end})`,
  );
  return verdict('stale writes', found);
}

/**
 * 2. Sends that reached the network more than once (one Idempotency-Key, whose text is the key), and
 * acknowledged sends that never reached it. `network` maps instance → the texts its outbox holds.
 */
export function checkSends(history: History, network: Map<string, string[]>): Verdict[] {
  const duplicates: string[] = [];
  const missing: string[] = [];
  for (const op of history.of('send')) {
    const instance = op.fields.instance as string;
    const copies = (network.get(instance) ?? []).filter((t) => t === op.fields.key).length;
    if (copies > 1) duplicates.push(`${describe(op)}: reached the network ${copies} times`);
    if (op.outcome === 'ok' && copies === 0) missing.push(`${describe(op)}: acknowledged, never reached the network`);
  }
  return [verdict('duplicate sends', duplicates), verdict('acknowledged sends lost', missing)];
}

/** 3. Inbound messages the owner accepted (200) that never reached the webhook receiver. */
export function checkLostEvents(history: History, received: Map<string, Set<string>>): Verdict {
  const found = history
    .of('inbound')
    .filter((op) => op.outcome === 'ok' && !received.get(op.fields.instance as string)?.has(op.fields.text as string))
    .map((op) => `${describe(op)}: no message.exchange at the webhook`);
  return verdict('lost events', found);
}

/**
 * 4. Settings: the final value is the last acknowledged write's, or that of a write whose outcome the
 * client could not know (it may take effect at any time after it was sent); never a refused one's.
 */
export function checkLostWrites(history: History, finalValues: Map<string, string | undefined>): Verdict {
  const found: string[] = [];
  const byInstance = new Map<string, Operation[]>();
  for (const op of history.of('settings')) {
    const list = byInstance.get(op.fields.instance as string) ?? [];
    list.push(op);
    byInstance.set(op.fields.instance as string, list);
  }
  for (const [instance, ops] of byInstance) {
    const acknowledged = ops.filter((o) => o.outcome === 'ok').sort((a, b) => a.end! - b.end!);
    const last = acknowledged.at(-1);
    const allowed = new Set<unknown>(ops.filter((o) => o.outcome === 'info').map((o) => o.fields.value));
    if (last) allowed.add(last.fields.value);
    else allowed.add(undefined);
    const value = finalValues.get(instance);
    if (!allowed.has(value)) {
      found.push(
        `${instance}: final callRejectMessage ${JSON.stringify(value)}, expected ${last ? describe(last) : 'none'}`,
      );
    }
  }
  return verdict('lost writes', found);
}

/** 5. Two owners: a node acting for an instance after a newer owner had begun to (from the nodes' own reports). */
export function checkTwoOwners(probeFile: string): Verdict {
  const found = twoOwners(readOwners(probeFile)).map(
    (v) =>
      `${v.instance}: ${v.old.node} held epoch ${v.old.epoch} at ${v.old.at.toFixed(1)}, after ${v.newer.node} ` +
      `began under epoch ${v.newer.epoch} at ${v.newer.at.toFixed(1)}`,
  );
  return verdict('two owners', found);
}

/**
 * 6. Billing: every event due by `cutoff` arrived, and none twice. Emission is what must happen once (one
 * delivery id per event); a delivery repeated under the same id after a cut-off answer is a redelivery.
 */
export function checkBilling(due: DueEvent[], received: Received[]): Verdict[] {
  const keyOf = (event: string, data: Record<string, unknown>) =>
    `${event}|${String(data.instance ?? data.periodStart)}`;
  const deliveries = new Map<string, Set<string>>();
  for (const r of received) {
    const event = r.body?.event as string | undefined;
    if (!event?.startsWith('enterprise.')) continue;
    const key = keyOf(event, r.body.data as Record<string, unknown>);
    const ids = deliveries.get(key) ?? new Set<string>();
    ids.add(String(r.headers['x-switchboard-delivery']));
    deliveries.set(key, ids);
  }
  const duplicates = [...deliveries]
    .filter(([, ids]) => ids.size > 1)
    .map(([key, ids]) => `${key}: emitted ${ids.size} times`);
  const missing = due
    .map((e) => keyOf(e.event, e.data))
    .filter((key) => !deliveries.has(key))
    .map((key) => `${key}: due, never delivered`);
  return [verdict('billing events twice', duplicates), verdict('billing events missing', missing)];
}

/**
 * Chatbot: each question a contact asked the bot (a unique text) is answered at most once; an answer sent
 * twice is an anomaly. (A question whose delivery was refused, or lost with an owner, may go unanswered.)
 */
export function checkChatbotReplies(history: History, replies: string[]): Verdict {
  const count = new Map<string, number>();
  for (const r of replies) count.set(r, (count.get(r) ?? 0) + 1);
  const found = history
    .of('chat')
    .filter((op) => (count.get(`echo ${String(op.fields.text)}`) ?? 0) > 1)
    .map((op) => `${describe(op)}: answered ${count.get(`echo ${String(op.fields.text)}`)} times`);
  return verdict('chatbot replies twice', found);
}

/**
 * Calls: an offered call the owner acknowledged (it answers only once the call's handling, rejection
 * included, is done) is rejected exactly once at the network; any call rejected twice is an anomaly.
 */
export function checkCallRejections(history: History, rejected: Map<string, string[]>): Verdict[] {
  const twice: string[] = [];
  for (const [instance, ids] of rejected) {
    const count = new Map<string, number>();
    for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
    for (const [id, n] of count) if (n > 1) twice.push(`${instance}: call ${id} rejected ${n} times`);
  }
  const missing = history
    .of('call')
    .filter((op) => op.outcome === 'ok' && !rejected.get(op.fields.instance as string)?.includes(op.detail ?? ''))
    .map((op) => `${describe(op)}: acknowledged, never rejected`);
  return [verdict('calls rejected twice', twice), verdict('acknowledged calls not rejected', missing)];
}

/** 7. After the last fault healed, every instance owned and answering within the limit. */
export function checkAvailability(unavailable: string[], tookMs: number, limitMs: number): Verdict {
  const found = unavailable.map((i) => `${i}: not owned and answering ${limitMs} ms after the last fault healed`);
  if (found.length === 0 && tookMs > limitMs) found.push(`all answered, but only after ${tookMs} ms`);
  return verdict('availability', found);
}
