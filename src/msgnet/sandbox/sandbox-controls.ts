import { randomBytes } from 'node:crypto';
import { newMessageId } from '../message-id.js';
import type { AuthStore, LabelInfo, MsgNetSession } from '../msgnet-driver.js';
import type { MsgNetEvent } from '../msgnet-events.js';
import { toJid } from './sandbox-phone.js';
import type { SandboxPhone, SandboxProfile } from './sandbox-phone.js';
import type { OutboxEntry, SandboxGroup, SandboxWire } from './sandbox-wire.js';

/** What the controls reach inside their session. */
export interface SandboxInternals {
  phone: SandboxPhone;
  auth: AuthStore;
  /** Failures to simulate, by operation, each used once. */
  faults: Map<string, string>;
  emit(event: MsgNetEvent): void;
  /** @returns the session's number. @throws NotConnectedError */
  requireConnected(): string;
  /** Handles a message as if it had arrived from the network. */
  receive(wire: Extract<SandboxWire, { t: 'msg' }>): void;
  /** Notes a person in the phone's address book. */
  saveContact(jid: string, names: { fullName?: string; firstName?: string }): void;
  /** Answers a call this phone is ringing with. */
  answerCall(callId: string): Promise<{ from: string }>;
  /** Completes a pending link (the QR scanned or the code entered). */
  link(number: string | undefined): Promise<string>;
}

/** A contact's message as the controls inject it. */
export type InjectedMessage = Omit<Extract<SandboxWire, { t: 'msg' }>, 't' | 'id' | 'timestamp'>;

/**
 * The simulated network's test controls (the /api/sandbox endpoints): what the phone and its contacts do,
 * which a real network does by itself. Kept apart from the session so that the actor core, which knows
 * only MsgNetSession, reaches them through `sandboxControls(session)` and never by the session's class.
 */
export class SandboxControls {
  constructor(private readonly session: SandboxInternals) {}

  /** What the phone does when it scans the QR or enters the code (POST /api/sandbox/link). */
  link(number: string | undefined): Promise<string> {
    return this.session.link(number);
  }

  /** Makes the next call of `operation` fail with `message`, as the network sometimes does (POST /api/sandbox/fault). */
  fail(operation: string, message: string): void {
    this.session.faults.set(operation, message);
  }

  /** A contact sends this instance a message (POST /api/sandbox/inbound). */
  injectInbound(input: InjectedMessage): string {
    this.session.requireConnected();
    const id = newMessageId();
    this.session.receive({ t: 'msg', id, timestamp: Date.now(), ...input });
    return id;
  }

  /** A contact calls this instance (POST /api/sandbox/call). */
  injectCall(from: string, isVideo: boolean): string {
    this.session.requireConnected();
    const callId = randomBytes(16).toString('hex').toUpperCase();
    this.session.emit({ type: 'call', callId, from, status: 'offer', isVideo, isGroup: false, timestamp: Date.now() });
    return callId;
  }

  /** The phone picks up a call ringing on it (POST /api/sandbox/answerCall): an audio call then plays. */
  answerCall(callId: string): Promise<{ from: string }> {
    this.session.requireConnected();
    return this.session.answerCall(callId);
  }

  /** What the instance sent, oldest first (GET /api/sandbox/outbox). */
  async outbox(to?: string, after?: string): Promise<OutboxEntry[]> {
    const all = [...(await this.session.auth.list('outbox:')).values()].map((v) => JSON.parse(v) as OutboxEntry);
    const start = after ? all.findIndex((e) => e.messageId === after) + 1 : 0;
    return all.slice(start).filter((e) => to === undefined || e.to === to);
  }

  /** Seeds a group the phone is in (POST /api/sandbox/group); emits `joined`. */
  async addGroup(
    subject: string,
    description: string,
    participants: { number: string; admin?: boolean }[],
  ): Promise<SandboxGroup> {
    const me = this.session.requireConnected();
    const group = await this.session.phone.addGroup(me, subject, description, participants);
    this.session.emit({
      type: 'group',
      groupJid: group.jid,
      action: 'joined',
      participants: group.participants.map((p) => ({ jid: p.jid })),
      groupName: subject,
      timestamp: Date.now(),
    });
    return group;
  }

  /** Sets a chat's labels as the phone would (POST /api/sandbox/labels); emits a label event. */
  async setLabels(chat: string, labels: LabelInfo[]): Promise<void> {
    this.session.requireConnected();
    const chatJid = toJid(chat);
    await this.session.phone.setChatLabels(chatJid, labels);
    this.session.emit({
      type: 'labels',
      chatJid,
      labels,
      action: labels.length ? 'add' : 'remove',
      timestamp: Date.now(),
    });
  }

  /** The phone saves a contact, which it syncs to the linked device (POST /api/sandbox/contact). */
  saveContact(number: string, fullName: string, firstName: string | undefined): string {
    this.session.requireConnected();
    const jid = toJid(number);
    this.session.saveContact(jid, { fullName, ...(firstName ? { firstName } : {}) });
    return jid;
  }

  /** The profile the network holds (GET /api/sandbox/profile). */
  profile(): Promise<SandboxProfile> {
    return this.session.phone.profile();
  }
}

const registry = new WeakMap<MsgNetSession, SandboxControls>();

export function registerControls(session: MsgNetSession, controls: SandboxControls): void {
  registry.set(session, controls);
}

/** The test controls of a sandbox session; undefined for any other network's session. */
export function sandboxControls(session: MsgNetSession): SandboxControls | undefined {
  return registry.get(session);
}
