import { connectAndLink } from '../cluster/cluster-fixture.js';
import type { ApiClient } from '../helpers/test-node.js';
import { addTo, emptyObservation } from './chaos-network.js';
import type { ChaosNetwork, InboundResult, NetworkObservation } from './chaos-network.js';
import type { ChaosCluster } from './chaos-cluster.js';
import type { History } from './history.js';
import { request } from './workload.js';
import type { ChaosInstance } from './workload.js';

/**
 * The sandbox network of `--driver sandbox`: contacts write through `/api/sandbox/inbound`, and what
 * the instances sent is read from `/api/sandbox/outbox`. A weaker observer than the simulator: the owner
 * serves its outbox from its own fenced state, and the sandbox accepts an inbound message only once the
 * owner has queued it.
 */
export class SandboxNetwork implements ChaosNetwork {
  readonly driver = 'sandbox' as const;
  readonly faults = [];

  async nodeEnv(): Promise<Record<string, string>> {
    return { MSGNET_DRIVER: 'sandbox' };
  }

  contact(i: number): string {
    return `55990000${String(1000 + i)}`;
  }

  async prepare(): Promise<void> {}

  async link(api: ApiClient, instance: ChaosInstance): Promise<void> {
    await connectAndLink(api, api, instance.name, instance.token, { number: instance.number });
  }

  async inbound(instance: ChaosInstance, contact: number, text: string, api: ApiClient): Promise<InboundResult> {
    const res = await request(api.baseUrl, 'POST', `/api/sandbox/inbound/${instance.name}`, instance.token, {
      from: this.contact(contact),
      text,
    });
    if (res?.status === 200) return { outcome: 'ok', id: String(res.body.messageId ?? text) };
    if (res && res.status < 500) return { outcome: 'refused', detail: `${res.status}` };
    return { outcome: 'unknown', detail: res ? `${res.status}` : 'no answer' };
  }

  async call(instance: ChaosInstance, contact: number, api: ApiClient): Promise<InboundResult> {
    const res = await request(api.baseUrl, 'POST', `/api/sandbox/call/${instance.name}`, instance.token, {
      from: this.contact(contact),
      isVideo: false,
    });
    if (res?.status === 200) return { outcome: 'ok', id: String(res.body.callId) };
    if (res && res.status < 500) return { outcome: 'refused', detail: `${res.status}` };
    return { outcome: 'unknown', detail: res ? `${res.status}` : 'no answer' };
  }

  async observe(
    instances: ChaosInstance[],
    bot: ChaosInstance,
    history: History,
    cluster: ChaosCluster,
  ): Promise<NetworkObservation> {
    const o = emptyObservation();
    const front = () => cluster.running[0]!.process!.url;
    for (const instance of instances) {
      const outbox = await request(front(), 'GET', `/api/sandbox/outbox/${instance.name}`, instance.token);
      const messages = (outbox?.body?.messages ?? []) as {
        messageId: string;
        type: string;
        text?: string;
        media?: { caption?: string };
        call?: { callId: string };
      }[];
      const sent = new Map<string, Set<string>>();
      for (const m of messages) {
        if (m.type === 'text' || m.type === 'media') {
          addTo(sent, m.type === 'media' ? (m.media?.caption ?? '') : (m.text ?? ''), m.messageId);
        }
      }
      o.sent.set(instance.name, sent);
      o.rejections.set(
        instance.name,
        messages.filter((m) => m.type === 'call_reject').map((m) => m.call?.callId ?? ''),
      );
    }
    // The sandbox acknowledges an inbound message once the owner has queued it, and a call once handled.
    for (const op of history.of('inbound')) {
      if (op.outcome === 'ok') addTo(o.delivered, op.fields.instance as string, op.fields.text as string);
    }
    for (const op of history.of('chat')) {
      if (op.outcome === 'ok') o.questions.add(op.fields.text as string);
    }
    for (const op of history.of('call')) {
      if (op.outcome === 'ok') addTo(o.acknowledgedCalls, op.fields.instance as string, op.detail ?? '');
    }
    const botOutbox = await request(front(), 'GET', `/api/sandbox/outbox/${bot.name}`, bot.token);
    o.botReplies = ((botOutbox?.body?.messages ?? []) as { type: string; text?: string }[])
      .filter((m) => m.type === 'text')
      .map((m) => m.text ?? '');
    return o;
  }

  async close(): Promise<void> {}
}
