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
 * 2. Sends: one Idempotency-Key (the text or caption is the key) reaching the network under more than
 * one message id is a duplicate send; an acknowledged send the network never carried is lost. `sent`
 * maps instance → text → the message ids the network carried it under (a relay of one id twice is the
 * network's doing, not a second send).
 */
export function checkSends(history: History, sent: Map<string, Map<string, Set<string>>>): Verdict[] {
  const duplicates: string[] = [];
  const missing: string[] = [];
  for (const op of history.of('send')) {
    const ids = sent.get(op.fields.instance as string)?.get(op.fields.key as string);
    const copies = ids?.size ?? 0;
    if (copies > 1) duplicates.push(`${describe(op)}: reached the network ${copies} times (${[...ids!].join(', ')})`);
    if (op.outcome === 'ok' && copies === 0) missing.push(`${describe(op)}: acknowledged, never reached the network`);
  }
  return [verdict('duplicate sends', duplicates), verdict('acknowledged sends lost', missing)];
}

/**
 * 3. Inbound messages the network handed to the instance for good (on WhatsApp: its device sent the
 * receipt, after which WhatsApp forgets the message) that never reached the webhook receiver.
 */
export function checkLostEvents(
  history: History,
  delivered: Map<string, Set<string>>,
  received: Map<string, Set<string>>,
  consumer = 'webhook',
): Verdict {
  const found = history
    .of('inbound')
    .filter((op) => delivered.get(op.fields.instance as string)?.has(op.fields.text as string))
    .filter((op) => !received.get(op.fields.instance as string)?.has(op.fields.text as string))
    .map((op) => `${describe(op)}: handed over to the instance, no message.exchange at the ${consumer}`);
  return verdict(consumer === 'webhook' ? 'lost inbound' : `lost inbound (${consumer})`, found);
}

/**
 * A broker must hold each message's event once: a second distinct copy (on a stream that deduplicates on
 * the event id, any second copy; elsewhere, a second event id) is an event emitted twice or a publish the
 * duplicate window did not catch.
 */
export function checkStreamDuplicates(copies: Map<string, number>, consumer = 'NATS stream'): Verdict {
  const found = [...copies].filter(([, n]) => n > 1).map(([id, n]) => `message ${id}: ${n} events in the ${consumer}`);
  return verdict(`duplicates (${consumer})`, found);
}

/**
 * Decryption failures at either end that WhatsApp's retry protocol did not repair: a message lost to a
 * Signal session corrupted by a handoff or a failover. (The repaired ones are counted in the notes.)
 */
export function checkDecryptFailures(
  failures: string[],
  companionRetries: { id: string; line: string }[] = [],
  emitted: ReadonlySet<string> = new Set(),
): Verdict {
  return verdict('decryption failures', [
    ...failures,
    ...companionRetries.filter((r) => !emitted.has(r.id)).map((r) => `${r.line}, never at the webhook`),
  ]);
}

/** Side effects that reached the network from a connection whose owner's epoch was already superseded. */
export function checkStaleSideEffects(found: string[]): Verdict {
  return verdict('stale side effects', found);
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

/** Chatbot: a question the bot's instance took from the network (its receipt went) and never answered. */
export function checkChatbotUnanswered(history: History, questions: Set<string>, replies: string[]): Verdict {
  const answered = new Set(replies);
  const found = history
    .of('chat')
    .filter((op) => questions.has(op.fields.text as string) && !answered.has(`echo ${String(op.fields.text)}`))
    .map((op) => `${describe(op)}: handed over to the bot's instance, never answered`);
  return verdict('chatbot questions unanswered', found);
}

/**
 * Calls: a call whose offer the instance acknowledged is rejected exactly once at the network (the owner
 * rejects it with autoRejectCalls); any call rejected twice is an anomaly.
 */
export function checkCallRejections(
  acknowledged: Map<string, Set<string>>,
  rejected: Map<string, string[]>,
  timelines?: Map<string, string>,
): Verdict[] {
  const twice: string[] = [];
  for (const [instance, ids] of rejected) {
    const count = new Map<string, number>();
    for (const id of ids) count.set(id, (count.get(id) ?? 0) + 1);
    for (const [id, n] of count) if (n > 1) twice.push(`${instance}: call ${id} rejected ${n} times`);
  }
  const missing: string[] = [];
  for (const [instance, ids] of acknowledged) {
    for (const id of ids) {
      if (rejected.get(instance)?.includes(id)) continue;
      const timeline = timelines?.get(id);
      missing.push(`${instance}: call ${id} acknowledged, never rejected${timeline ? ` (${timeline})` : ''}`);
    }
  }
  return [verdict('calls rejected twice', twice), verdict('acknowledged calls not rejected', missing)];
}

/** 7. After the last fault healed, every instance owned and answering within the limit. */
export function checkAvailability(unavailable: string[], tookMs: number, limitMs: number): Verdict {
  const found = unavailable.map((i) => `${i}: not owned and answering ${limitMs} ms after the last fault healed`);
  if (found.length === 0 && tookMs > limitMs) found.push(`all answered, but only after ${tookMs} ms`);
  return verdict('availability', found);
}

/** A `message.exchange` the receiver got on the webhook that the workload re-configures (label `cfg`). */
export interface ConfigDelivery {
  instance: string;
  /** The inbound text the event carries. */
  text: string;
  /** The path it was POSTed to (each configuration points at its own). */
  path: string;
}

/**
 * 6. Lost or stale configuration. One writer per instance changes its `cfg` webhook (`webhook` operations,
 * `target` the path it now points at, or null when it no longer takes `message.exchange`). An inbound
 * message invoked after change k was acknowledged is emitted after that answer, so it may go only to
 * change k's target or a later change's (or an unacknowledged change's, which may apply at any time): a
 * delivery to an older target is stale; none at all, while every target it may go to takes the event and
 * the default webhook shows it was emitted, is lost.
 */
export function checkConfigChanges(
  history: History,
  deliveries: ConfigDelivery[],
  emitted: Map<string, Set<string>>,
  initialTarget: string | null,
): Verdict {
  const found: string[] = [];
  const changes = new Map<string, Operation[]>();
  for (const op of history.of('webhook')) {
    const list = changes.get(op.fields.instance as string) ?? [];
    list.push(op);
    changes.set(op.fields.instance as string, list);
  }
  const seen = new Map<string, Set<string>>();
  for (const d of deliveries) {
    const key = `${d.instance}\n${d.text}`;
    seen.set(key, (seen.get(key) ?? new Set()).add(d.path));
  }
  for (const op of history.of('inbound')) {
    const instance = op.fields.instance as string;
    const text = op.fields.text as string;
    const list = changes.get(instance) ?? [];
    // The last change acknowledged before the message was sent: what every node must apply to it.
    let k = -1;
    list.forEach((c, i) => {
      if (c.outcome === 'ok' && c.end !== undefined && c.end < op.start) k = i;
    });
    const allowed = new Set<string | null>([k < 0 ? initialTarget : (list[k]!.fields.target as string | null)]);
    list.forEach((c, i) => {
      // A refused change never applies; a later or unanswered one may apply at any time.
      if (c.outcome !== 'fail' && (i > k || c.outcome !== 'ok')) allowed.add(c.fields.target as string | null);
    });
    const paths = seen.get(`${instance}\n${text}`) ?? new Set<string>();
    const stale = [...paths].filter((p) => !allowed.has(p));
    if (stale.length > 0) {
      const after = k < 0 ? 'the initial configuration' : `#${list[k]!.index}`;
      found.push(`${describe(op)}: delivered to ${stale.join(', ')} after ${after} was acknowledged`);
    } else if (paths.size === 0 && !allowed.has(null) && emitted.get(instance)?.has(text)) {
      found.push(`${describe(op)}: emitted, never delivered to ${[...allowed].join(' or ')}`);
    }
  }
  return verdict('stale or lost configuration', found);
}
