import type { ActorContext } from '../../actors/instance-actor.js';
import type { NormalizedMessage } from '../../msgnet/msgnet-events.js';
import { HELPDESK_NAMESPACE, HELPDESK_QUEUE_NAMESPACE, HELPDESK_SEEN_NAMESPACE } from '../../store/namespaces.js';
import type { OwnedStateOp } from '../../store/records.js';
import type { HelpdeskInbound } from './helpdesk-calls.js';

/**
 * The helpdesk bridge's instance-owned state, written only through the actor's fenced `writeOwned`:
 * - queue (`helpdesk-queue`): `out:…` WhatsApp messages waiting to be posted to Chatwoot, `in:…` agent
 *   messages waiting to be sent to WhatsApp, each keyed by arrival time so that a new owner resumes them
 *   in order;
 * - seen (`helpdesk-seen`): what was already handled, by WhatsApp id (`wa:`) and by Chatwoot message id
 *   (`cw:`), so that a retry or a redelivered webhook does nothing twice; pruned after `SEEN_TTL_MS`;
 * - cache (`helpdesk`): each chat's Chatwoot contact and conversation (`chat:<jid>`), and each
 *   conversation's chat (`conv:<id>`).
 */

export type AgentMessage = Extract<HelpdeskInbound, { kind: 'agent-message' }>;

export interface OutboundEntry {
  key: string;
  message: NormalizedMessage;
  /** Attempts made so far; after one, a post first checks whether the message already reached Chatwoot. */
  attempts: number;
}

export interface InboundEntry {
  key: string;
  message: AgentMessage;
}

/**
 * What became of a message:
 * - `wa:` ids: `posted` to Chatwoot, `agent` (an agent's message we sent: never posted back), `dropped`;
 * - `cw:` ids: `queued`, `sending` (a crash then leaves it unsent rather than sent twice), `sent`, `failed`.
 */
export type SeenState = 'posted' | 'agent' | 'dropped' | 'queued' | 'sending' | 'sent' | 'failed';

interface SeenRecord {
  s: SeenState;
  at: number;
}

/** Where a chat lives in Chatwoot. */
export interface ChatLink {
  contactId: number;
  /** The contact inbox's source id in our inbox. */
  sourceId?: string;
  conversationId?: number;
  /** Chatwoot said the conversation was resolved (its webhook). */
  resolved?: boolean;
  /** When the conversation was last known to exist with that status (Unix ms). */
  checkedAt: number;
}

export const SEEN_TTL_MS = 7 * 24 * 3600_000;

let sequence = 0;
/** Sorts by time, then by a per-process sequence (two entries in one millisecond keep their order). */
const queueKey = (prefix: 'out' | 'in', id: string | number) =>
  `${prefix}:${String(Date.now()).padStart(15, '0')}:${String(++sequence % 1e9).padStart(9, '0')}:${id}`;

const seenOp = (key: string, s: SeenState): OwnedStateOp => ({
  namespace: HELPDESK_SEEN_NAMESPACE,
  key,
  value: JSON.stringify({ s, at: Date.now() } satisfies SeenRecord),
});

export class BridgeState {
  constructor(private readonly ctx: () => ActorContext) {}

  #read(namespace: string, key: string): Promise<string | undefined> {
    const c = this.ctx();
    return c.store.ownedState.get(c.instanceId, namespace, key);
  }

  write(ops: OwnedStateOp[]): Promise<void> {
    return this.ctx().writeOwned(ops);
  }

  /** Both queues, oldest first. */
  async loadQueues(): Promise<{ outbound: OutboundEntry[]; inbound: InboundEntry[] }> {
    const c = this.ctx();
    const all = await c.store.ownedState.list(c.instanceId, HELPDESK_QUEUE_NAMESPACE);
    const outbound: OutboundEntry[] = [];
    const inbound: InboundEntry[] = [];
    for (const key of [...all.keys()].sort()) {
      const value = JSON.parse(all.get(key)!) as unknown;
      if (key.startsWith('out:')) outbound.push({ key, ...(value as Omit<OutboundEntry, 'key'>) });
      else if (key.startsWith('in:')) inbound.push({ key, message: value as AgentMessage });
    }
    return { outbound, inbound };
  }

  outboundEntry(message: NormalizedMessage): { entry: OutboundEntry; op: OwnedStateOp } {
    const entry: OutboundEntry = { key: queueKey('out', message.id), message, attempts: 0 };
    return {
      entry,
      op: { namespace: HELPDESK_QUEUE_NAMESPACE, key: entry.key, value: JSON.stringify({ message, attempts: 0 }) },
    };
  }

  inboundEntry(message: AgentMessage): { entry: InboundEntry; ops: OwnedStateOp[] } {
    const entry: InboundEntry = { key: queueKey('in', message.messageId), message };
    return {
      entry,
      ops: [
        { namespace: HELPDESK_QUEUE_NAMESPACE, key: entry.key, value: JSON.stringify(message) },
        seenOp(`cw:${message.messageId}`, 'queued'),
      ],
    };
  }

  dequeue(key: string): OwnedStateOp {
    return { namespace: HELPDESK_QUEUE_NAMESPACE, key, value: null };
  }

  seenWhatsapp(id: string, s: SeenState): OwnedStateOp {
    return seenOp(`wa:${id}`, s);
  }

  seenChatwoot(id: number, s: SeenState): OwnedStateOp {
    return seenOp(`cw:${id}`, s);
  }

  async whatsappSeen(id: string): Promise<SeenState | undefined> {
    const raw = await this.#read(HELPDESK_SEEN_NAMESPACE, `wa:${id}`);
    return raw ? (JSON.parse(raw) as SeenRecord).s : undefined;
  }

  async chatwootSeen(id: number): Promise<SeenState | undefined> {
    const raw = await this.#read(HELPDESK_SEEN_NAMESPACE, `cw:${id}`);
    return raw ? (JSON.parse(raw) as SeenRecord).s : undefined;
  }

  /** Deletes the seen records older than `SEEN_TTL_MS`; returns how many. */
  async pruneSeen(now = Date.now()): Promise<number> {
    const c = this.ctx();
    const all = await c.store.ownedState.list(c.instanceId, HELPDESK_SEEN_NAMESPACE);
    const old = [...all].filter(([, v]) => (JSON.parse(v) as SeenRecord).at < now - SEEN_TTL_MS).map(([key]) => key);
    for (let i = 0; i < old.length; i += 500) {
      await this.write(old.slice(i, i + 500).map((key) => ({ namespace: HELPDESK_SEEN_NAMESPACE, key, value: null })));
    }
    return old.length;
  }

  async chatLink(jid: string): Promise<ChatLink | undefined> {
    const raw = await this.#read(HELPDESK_NAMESPACE, `chat:${jid}`);
    return raw ? (JSON.parse(raw) as ChatLink) : undefined;
  }

  /** The chat of a conversation the bridge opened or found. */
  async chatOfConversation(conversationId: number): Promise<string | undefined> {
    return this.#read(HELPDESK_NAMESPACE, `conv:${conversationId}`);
  }

  async saveChatLink(jid: string, link: ChatLink): Promise<void> {
    const ops: OwnedStateOp[] = [{ namespace: HELPDESK_NAMESPACE, key: `chat:${jid}`, value: JSON.stringify(link) }];
    if (link.conversationId !== undefined) {
      ops.push({ namespace: HELPDESK_NAMESPACE, key: `conv:${link.conversationId}`, value: jid });
    }
    await this.write(ops);
  }

  /** Forgets everything the bridge kept (the integration was removed, or points at another Chatwoot). */
  async clear(all: boolean): Promise<void> {
    const c = this.ctx();
    await c.clearOwned(HELPDESK_NAMESPACE);
    if (!all) return;
    await c.clearOwned(HELPDESK_QUEUE_NAMESPACE);
    await c.clearOwned(HELPDESK_SEEN_NAMESPACE);
  }
}
