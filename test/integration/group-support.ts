import type { EventEnvelope, GroupFlowData } from '../../src/events/instance-events.js';
import type { ApiResponse } from '../helpers/test-node.js';
import type { NetworkNode } from './network-support.js';
import { until } from '../helpers/until.js';

/** Linked sandbox instances of the group suites, by name (not a test file itself). */

export interface Phone {
  name: string;
  number: string;
  jid: string;
  token: string;
  events: EventEnvelope[];
}

export async function linkPhone(n: NetworkNode, name: string, number: string): Promise<Phone> {
  const token = await n.linked(name, number);
  return { name, number, jid: `${number}@s.whatsapp.net`, token, events: await n.record(token) };
}

/** `POST /api/group/<op>/<phone>`. */
export function groupPost(n: NetworkNode, op: string, phone: Phone, body: unknown): Promise<ApiResponse> {
  return n.node.api.post(`/api/group/${op}/${phone.name}`, body, { token: phone.token });
}

/** `GET /api/group/<op>/<phone>?groupJid=`. */
export function groupGet(n: NetworkNode, op: string, phone: Phone, groupJid: string): Promise<ApiResponse> {
  return n.node.api.get(`/api/group/${op}/${phone.name}?groupJid=${encodeURIComponent(groupJid)}`, {
    token: phone.token,
  });
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The `group.flow` events a phone has received about a group, in order. */
export function flows(phone: Phone, groupJid: string): GroupFlowData[] {
  return phone.events
    .filter((e) => e.event === 'group.flow' && (e.data as GroupFlowData).groupJid === groupJid)
    .map((e) => e.data as GroupFlowData);
}

/** Waits for a `group.flow` of `type` (matching `match`) on every phone; returns the first of each. */
export async function flowOn(
  phones: Phone[],
  groupJid: string,
  type: GroupFlowData['type'],
  match: (flow: GroupFlowData) => boolean = () => true,
): Promise<GroupFlowData[]> {
  const find = (p: Phone) => flows(p, groupJid).find((f) => f.type === type && match(f));
  await until(
    () => phones.every((p) => find(p) !== undefined),
    `group.flow ${type} on ${phones.map((p) => p.name).join(', ')}`,
  );
  return phones.map((p) => find(p)!);
}

/** The participants' JIDs of a flow. */
export const jidsOf = (flow: GroupFlowData) => flow.participants.map((p) => p.jid);
