import type { LinkChallenge, LinkRequest, SentMessage } from '../msgnet/msgnet-driver.js';
import type { OutboxEntry, SandboxGroup } from '../msgnet/sandbox/sandbox-wire.js';
import type { ConnectionState } from '../store/records.js';

/**
 * The calls an instance actor answers, with their payloads and results. A call crosses the wire as JSON
 * when the owner is another node, so payloads and results are plain data.
 */
export interface ActorCallMap {
  /** Starts linking (QR or pairing code), or says the instance is already connected. */
  'msgnet.connect': { payload: LinkRequest; result: LinkChallenge };
  'msgnet.logout': { payload: Record<string, never>; result: { state: ConnectionState } };
  'msgnet.reconnect': { payload: Record<string, never>; result: { state: ConnectionState } };
  'msgnet.sendText': { payload: { to: string; text: string }; result: SentMessage };
  /** Re-reads the instance's settings from the store and applies what is live (presence). */
  'settings.apply': { payload: Record<string, never>; result: { applied: boolean } };
  'sandbox.link': { payload: { number?: string }; result: { numberJid: string } };
  'sandbox.inbound': { payload: SandboxInbound; result: { messageId: string } };
  'sandbox.call': { payload: { from: string; isVideo: boolean }; result: { callId: string } };
  'sandbox.outbox': { payload: { to?: string; after?: string }; result: OutboxEntry[] };
  'sandbox.group': {
    payload: { subject: string; description: string; participants: { number: string; admin?: boolean }[] };
    result: SandboxGroup;
  };
  'sandbox.labels': { payload: { chat: string; labels: { id: string; name: string }[] }; result: { chat: string } };
  /** Who owns the instance and under which epoch. */
  describe: { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: one owned write, recorded when the store accepts it. */
  'probe.write': { payload: Record<string, never>; result: ActorDescription };
  /** Test probe: saves a link (what a linked messaging session leaves), making the instance runnable. */
  'probe.link': { payload: Record<string, never>; result: ActorDescription };
}

/** A contact's message to a sandbox instance (POST /api/sandbox/inbound). */
export interface SandboxInbound {
  from: string;
  text: string;
  pushName?: string;
  groupJid?: string;
  buttonReplyId?: string;
  media?: { kind: 'image' | 'video' | 'audio' | 'document' | 'sticker'; mimetype: string; fileName?: string; caption?: string; size?: number };
}

export type ActorCallKind = keyof ActorCallMap;
export type ActorPayload<K extends ActorCallKind> = ActorCallMap[K]['payload'];
export type ActorResult<K extends ActorCallKind> = ActorCallMap[K]['result'];

export interface ActorDescription {
  instanceId: string;
  nodeId: string;
  epoch: number;
  state: ActorState;
}

/**
 * Lifecycle of an actor on its node:
 * - `activating`: lease taken, epoch being claimed, behaviour starting; calls wait;
 * - `active`: runs calls one at a time;
 * - `draining`: handing off or shutting down: runs calls until the mailbox is empty (or the drain
 *   timeout passes), then stops;
 * - `stopped`: gone from this node; every side effect has ceased; calls get NotOwnerError.
 */
export type ActorState = 'activating' | 'active' | 'draining' | 'stopped';
