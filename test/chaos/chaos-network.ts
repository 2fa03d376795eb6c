import type { ApiClient } from '../helpers/test-node.js';
import type { ChaosCluster, ChaosNode } from './chaos-cluster.js';
import type { History } from './history.js';
import type { Random } from './random.js';
import type { ChaosInstance } from './workload.js';

/**
 * What the checkers learn from the messaging network itself, never from the nodes: on the Baileys
 * driver, the simulator and its phones; on the sandbox driver, the sandbox's outbox (a weaker observer:
 * it is served by the owner from its own fenced state).
 */
export interface NetworkObservation {
  /** Per instance: each text (or caption) the network carried from it, with the distinct message ids. */
  sent: Map<string, Map<string, Set<string>>>;
  /** Per instance: inbound texts the network considers handed over (the instance's device answered them). */
  delivered: Map<string, Set<string>>;
  /** Per instance: each call rejection the network carried, by call id (one entry per rejection). */
  rejections: Map<string, string[]>;
  /** Per instance: calls whose offer the instance's device acknowledged (a rejection must follow). */
  acknowledgedCalls: Map<string, Set<string>>;
  /** By call id: what the network saw of the call (offer, deliveries, acks, rejections), to explain an anomaly. */
  callTimelines?: Map<string, string>;
  /** Every text the bot instance sent to a contact. */
  botReplies: string[];
  /** Questions to the bot that the network considers handed over (the bot instance's device answered them). */
  questions: Set<string>;
  /** Decryption failures at either end that nothing repaired, one line each (the sandbox has none). */
  decryptFailures: string[];
  /**
   * Messages an instance's companion asked to be sent again (a retry receipt) and never receipted after:
   * repaired if the message still reached the webhook (the device decrypted a later copy, then lost its
   * connection before the receipt, and refused the next copy as one it had), lost otherwise.
   */
  companionRetries: { id: string; line: string }[];
  /**
   * Decryption failures that WhatsApp's retry protocol repaired (the message was decrypted after a retry
   * receipt): nothing lost, but each one is a Signal session that a fault left behind. Counted, not judged.
   */
  recoveredDecryptFailures: number;
  /** Side effects that reached the network from an owner whose epoch was already superseded. */
  staleSideEffects: string[];
  /** Lines for the run's log (what was observed, in numbers). */
  notes: string[];
}

/** A fault the network itself can produce (the simulator's), injected on one instance or node. */
export interface NetworkFault {
  name: string;
  /** Injects and heals the fault; resolves once healed. */
  inject(ctx: { node: ChaosNode; instance: ChaosInstance; random: Random }): Promise<void>;
}

/** The messaging network of a chaos run: the sandbox, or WhatsApp played by the simulator. */
export interface ChaosNetwork {
  readonly driver: 'baileys' | 'sandbox';
  /** The environment each node needs to use this network. */
  nodeEnv(nodeId: string): Promise<Record<string, string>>;
  /** The phone number each instance is linked to, made before it is linked. */
  prepare(instance: ChaosInstance): Promise<void>;
  /** Links an instance (connect, then the phone scans or the sandbox links), through `api`. */
  link(api: ApiClient, instance: ChaosInstance): Promise<void>;
  /** A contact writes `text` to the instance; resolves with the message id once the network accepted it. */
  inbound(instance: ChaosInstance, contact: number, text: string, api: ApiClient): Promise<InboundResult>;
  /** A contact calls the instance; resolves with the call id once the network carried the offer. */
  call(instance: ChaosInstance, contact: number, api: ApiClient): Promise<InboundResult>;
  /** The number of a contact (0-based). */
  contact(i: number): string;
  /** Faults of the network itself, beside the cluster's. */
  readonly faults: NetworkFault[];
  observe(
    instances: ChaosInstance[],
    bot: ChaosInstance,
    history: History,
    cluster: ChaosCluster,
  ): Promise<NetworkObservation>;
  /** The network's own record of the run (the simulator's stanza log, one JSON line each), for `--keep-logs`. */
  record?(): string;
  close(): Promise<void>;
}

/** `ok` with an id; `refused` (the network answered no); `unknown` (no answer, the outcome is not known). */
export type InboundResult = { outcome: 'ok'; id: string } | { outcome: 'refused' | 'unknown'; detail: string };

export function emptyObservation(): NetworkObservation {
  return {
    sent: new Map(),
    delivered: new Map(),
    rejections: new Map(),
    acknowledgedCalls: new Map(),
    botReplies: [],
    questions: new Set(),
    decryptFailures: [],
    companionRetries: [],
    recoveredDecryptFailures: 0,
    staleSideEffects: [],
    notes: [],
  };
}

/** Adds `value` to the set under `key` of a map of sets. */
export function addTo<K, V>(map: Map<K, Set<V>>, key: K, value: V): void {
  let set = map.get(key);
  if (!set) map.set(key, (set = new Set()));
  set.add(value);
}
