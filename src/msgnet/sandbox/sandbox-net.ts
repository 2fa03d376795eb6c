import type { AuthStore } from '../msgnet-driver.js';
import type { MsgNetEvent } from '../msgnet-events.js';
import type { SandboxPhone } from './sandbox-phone.js';
import type { OutboxRecord } from './sandbox-outbox.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';

export type { SandboxDomain } from './sandbox-wire.js';

/**
 * What the simulated network offers the session's operation classes (groups, chats, channels,
 * communities), each in its own file: the phone's state, the network's channels, and the session's
 * outbox and events.
 */
export interface SandboxNet {
  /** The linked number. @throws NotConnectedError */
  me(): string;
  auth: AuthStore;
  phone: SandboxPhone;
  emit(event: MsgNetEvent): void;
  /** Fails with the message of a simulated fault set on `operation`, once. */
  failIf(operation: string): void;
  /** Publishes on a number's, group's or channel's JID; resolves with how many phones listen there. */
  publish(jid: string, wire: SandboxWire): Promise<number>;
  /** Listens on a group's or a channel's JID while the session is online (members and owners do). */
  listen(jid: string): Promise<void>;
  unlisten(jid: string): Promise<void>;
  /** Records what the phone sent, as GET /api/sandbox/outbox shows it. */
  record(entry: OutboxRecord): Promise<OutboxEntry>;
}

/** One domain's part of the simulated phone. */
export interface SandboxOps {
  /** The JIDs to listen on once the session is online (the groups and channels the phone holds). */
  listening(): Promise<string[]>;
  /** A domain message from another phone (`from`), already parsed from the wire. */
  onWire(from: string, payload: unknown): void;
}
