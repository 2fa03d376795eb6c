import { randomBytes, randomInt } from 'node:crypto';
import type { Transport } from '../../cluster/transport.js';
import { ConflictError, NotConnectedError, ValidationError } from '../../errors.js';
import { channels } from '../../redis/keys.js';
import type { ConnectionState } from '../../store/records.js';
import type {
  Button,
  ChatLabels,
  EventCard,
  GroupInfo,
  LinkChallenge,
  LinkRequest,
  MsgNetSession,
  OutgoingMedia,
  PixPayment,
  PrivacyField,
  PrivacySettings,
  ProfileChanges,
  SentMessage,
  SessionOptions,
  StatusPost,
} from '../msgnet-driver.js';
import type { NormalizedMessage } from '../msgnet-events.js';
import type { OutboxEntry, SandboxGroup, SandboxWire } from './sandbox-wire.js';

const USER_DOMAIN = 's.whatsapp.net';
const DEFAULT_PRIVACY: PrivacySettings = {
  lastSeen: 'all',
  online: 'all',
  profile: 'all',
  status: 'all',
  readReceipts: 'all',
  callAdd: 'all',
  groupAdd: 'all',
};

/** `5511999998888` or `5511999998888@s.whatsapp.net` → the user JID; groups and broadcast pass through. */
export function toJid(number: string): string {
  const n = number.trim();
  if (n.includes('@')) return n;
  if (!/^\d{6,20}$/.test(n)) throw new ValidationError(`Invalid number: ${number}`);
  return `${n}@${USER_DOMAIN}`;
}

const newMessageId = () => `3EB0${randomBytes(8).toString('hex').toUpperCase()}`;

/**
 * One simulated phone. Its link, outbox, groups, labels, profile and privacy live in the session store
 * (instance-owned, fenced), so a new owner node resumes it after a failover without a new link. While
 * connected it listens on its number's channel for messages, receipts and calls from other numbers.
 */
export class SandboxSession implements MsgNetSession {
  #state: ConnectionState = 'disconnected';
  #numberJid: string | undefined;
  #pending: { pairingPhone?: string } | undefined;
  #unsubscribe: (() => Promise<void>) | undefined;
  #closed = false;
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(
    private readonly o: SessionOptions,
    private readonly transport: Transport,
  ) {}

  get state(): ConnectionState {
    return this.#state;
  }

  get numberJid(): string | undefined {
    return this.#numberJid;
  }

  #set(state: ConnectionState, extra: { qrCode?: string; reason?: string } = {}): void {
    this.#state = state;
    if (this.#closed) return;
    this.o.emit({ type: 'connection', state, ...(this.#numberJid ? { numberJid: this.#numberJid } : {}), ...extra });
  }

  async resume(): Promise<void> {
    const creds = await this.o.auth.get('creds');
    if (!creds) return;
    this.#numberJid = (JSON.parse(creds) as { numberJid: string }).numberJid;
    await this.#goOnline();
  }

  async #goOnline(): Promise<void> {
    this.#set('connecting');
    await this.#unsubscribe?.();
    this.#unsubscribe = await this.transport.subscribe(channels.sandboxNumber(this.#numberJid!), (raw) => this.#onWire(raw));
    this.#set('connected');
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    if (this.#state === 'connected' && this.#numberJid) return { status: 'connected', numberJid: this.#numberJid };
    if (await this.o.auth.get('creds')) {
      await this.resume();
      return { status: 'connected', numberJid: this.#numberJid! };
    }
    if (request.method === 'pairing') {
      const phone = request.phoneNumber.replace(/\D/g, '');
      if (!/^\d{8,15}$/.test(phone)) throw new ValidationError('Invalid phone number for a pairing code');
      this.#pending = { pairingPhone: phone };
      const pairingCode = Array.from({ length: 8 }, () => 'ABCDEFGHJKLMNPQRSTVWXYZ23456789'[randomInt(30)]).join('');
      this.#set('qr');
      return { status: 'pairing', pairingCode };
    }
    this.#pending = {};
    const qrCode = `2@${randomBytes(24).toString('base64')},${randomBytes(16).toString('base64')},sandbox`;
    this.#set('qr', { qrCode });
    return { status: 'qr', qrCode };
  }

  /** What the phone does when it scans the QR or enters the code (POST /api/sandbox/link). */
  async link(number: string | undefined): Promise<string> {
    if (this.#state !== 'qr' || !this.#pending) throw new ConflictError('Instance is not waiting for a link');
    const digits = number?.replace(/\D/g, '') || this.#pending.pairingPhone || `5599${String(randomInt(10 ** 9)).padStart(9, '0')}`;
    if (!/^\d{8,15}$/.test(digits)) throw new ValidationError('number must be 8 to 15 digits');
    const jid = `${digits}@${USER_DOMAIN}`;
    if ((await this.transport.publish(channels.sandboxNumber(jid), JSON.stringify({ t: 'ping' } satisfies SandboxWire))) > 0) {
      throw new ConflictError('That number is already linked to another sandbox instance');
    }
    await this.o.auth.set({ creds: JSON.stringify({ numberJid: jid, linkedAt: new Date().toISOString() }) });
    this.#pending = undefined;
    this.#numberJid = jid;
    await this.#goOnline();
    return jid;
  }

  async logout(): Promise<void> {
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    await this.o.auth.clear();
    this.#pending = undefined;
    this.#set('loggedout', { reason: 'logged out' });
    this.#numberJid = undefined;
  }

  async reconnect(): Promise<void> {
    if (!(await this.o.auth.get('creds'))) throw new ValidationError('Instance has no saved link; connect it first');
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#set('disconnected', { reason: 'reconnect requested' });
    await this.resume();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  // ---- the simulated network -------------------------------------------------------------------

  #requireConnected(): string {
    if (this.#state !== 'connected' || !this.#numberJid) throw new NotConnectedError();
    return this.#numberJid;
  }

  async #send(to: string, wire: SandboxWire): Promise<number> {
    return this.transport.publish(channels.sandboxNumber(to), JSON.stringify(wire));
  }

  #onWire(raw: string): void {
    const wire = JSON.parse(raw) as SandboxWire;
    if (wire.t === 'ping' || this.#closed) return;
    if (wire.t === 'receipt') {
      this.o.emit({ type: 'delivery', chatJid: wire.from, recipient: wire.from, status: wire.status, messageIds: wire.ids, timestamp: wire.timestamp });
    } else if (wire.t === 'call') {
      this.o.emit({ type: 'call', callId: wire.callId, from: wire.from, status: wire.status, isVideo: wire.isVideo, isGroup: false, timestamp: wire.timestamp });
    } else {
      this.#receive(wire);
      // The phone acknowledges delivery at once, as WhatsApp does while online.
      void this.#send(wire.from, { t: 'receipt', from: this.#numberJid!, status: 'delivered', ids: [wire.id], timestamp: Date.now() }).catch(
        () => undefined,
      );
    }
  }

  #receive(wire: Extract<SandboxWire, { t: 'msg' }>): void {
    const message: NormalizedMessage = {
      id: wire.id,
      fromMe: false,
      timestamp: wire.timestamp,
      chat: wire.groupJid ? { jid: wire.groupJid, type: 'group' } : { jid: wire.from, type: 'private', ...(wire.pushName ? { name: wire.pushName } : {}) },
      sender: { jid: wire.from, ...(wire.pushName ? { name: wire.pushName } : {}) },
      type: wire.buttonReplyId ? 'buttons_response' : wire.media ? 'media' : 'text',
      text: wire.text,
      ...(wire.media ? { media: wire.media } : {}),
      ...(wire.buttonReplyId ? { selectedButtonId: wire.buttonReplyId } : {}),
    };
    this.o.emit({ type: 'message', message });
  }

  /** A contact sends this instance a message (POST /api/sandbox/inbound). */
  injectInbound(input: Omit<Extract<SandboxWire, { t: 'msg' }>, 't' | 'id' | 'timestamp'>): string {
    this.#requireConnected();
    const id = newMessageId();
    this.#receive({ t: 'msg', id, timestamp: Date.now(), ...input });
    return id;
  }

  /** A contact calls this instance (POST /api/sandbox/call). */
  injectCall(from: string, isVideo: boolean): string {
    this.#requireConnected();
    const callId = randomBytes(16).toString('hex').toUpperCase();
    this.o.emit({ type: 'call', callId, from, status: 'offer', isVideo, isGroup: false, timestamp: Date.now() });
    return callId;
  }

  async #record(entry: Omit<OutboxEntry, 'messageId' | 'timestamp'> & { messageId?: string }): Promise<OutboxEntry> {
    const full: OutboxEntry = { ...entry, messageId: entry.messageId ?? newMessageId(), timestamp: Date.now() };
    // The key sorts by time, then id: the outbox lists oldest first.
    await this.o.auth.set({ [`outbox:${String(full.timestamp).padStart(15, '0')}:${full.messageId}`]: JSON.stringify(full) });
    return full;
  }

  async outbox(to?: string, after?: string): Promise<OutboxEntry[]> {
    const all = [...(await this.o.auth.list('outbox:')).values()].map((v) => JSON.parse(v) as OutboxEntry);
    const start = after ? all.findIndex((e) => e.messageId === after) + 1 : 0;
    return all.slice(start).filter((e) => to === undefined || e.to === to);
  }

  async #deliver(to: string, entry: OutboxEntry, wire: Extract<SandboxWire, { t: 'msg' }>): Promise<SentMessage> {
    const me = this.#numberJid!;
    this.o.emit({
      type: 'message',
      message: { id: entry.messageId, fromMe: true, timestamp: entry.timestamp, chat: { jid: to, type: to.endsWith('@g.us') ? 'group' : 'private' }, sender: { jid: me }, type: wire.media ? 'media' : 'text', text: wire.text, ...(wire.media ? { media: wire.media } : {}) },
    });
    this.o.emit({ type: 'delivery', chatJid: to, recipient: to, status: 'sent', messageIds: [entry.messageId], timestamp: entry.timestamp });
    await this.#send(to, wire).catch(() => 0);
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }

  async sendText(to: string, text: string): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const entry = await this.#record({ to: jid, type: 'text', text });
    return this.#deliver(jid, entry, { t: 'msg', id: entry.messageId, from, timestamp: entry.timestamp, text });
  }

  async sendMedia(to: string, media: OutgoingMedia): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const meta = { kind: media.kind, mimetype: media.mimetype, size: media.data.length, ...(media.fileName ? { fileName: media.fileName } : {}), ...(media.caption ? { caption: media.caption } : {}) };
    const entry = await this.#record({ to: jid, type: 'media', media: meta });
    return this.#deliver(jid, entry, { t: 'msg', id: entry.messageId, from, timestamp: entry.timestamp, text: media.caption ?? '', media: meta });
  }

  async sendButtons(to: string, text: string, buttons: Button[]): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const entry = await this.#record({ to: jid, type: 'buttons', text, buttons });
    return this.#deliver(jid, entry, { t: 'msg', id: entry.messageId, from, timestamp: entry.timestamp, text });
  }

  async sendPayment(to: string, payment: PixPayment): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const entry = await this.#record({ to: jid, type: 'payment', payment });
    return this.#deliver(jid, entry, { t: 'msg', id: entry.messageId, from, timestamp: entry.timestamp, text: '' });
  }

  async sendEventCard(to: string, card: EventCard): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const entry = await this.#record({ to: jid, type: 'event', event: card });
    return this.#deliver(jid, entry, { t: 'msg', id: entry.messageId, from, timestamp: entry.timestamp, text: card.name });
  }

  async publishStatus(post: StatusPost): Promise<SentMessage> {
    this.#requireConnected();
    const entry = await this.#record({
      to: 'status@broadcast',
      type: 'status',
      text: post.text,
      status: { type: post.type, ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}), ...(post.font !== undefined ? { font: post.font } : {}) },
      ...(post.media ? { media: { kind: post.media.kind, mimetype: post.media.mimetype, size: post.media.data.length } } : {}),
    });
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }

  async deleteMessage(chatJid: string, messageId: string): Promise<void> {
    this.#requireConnected();
    await this.#record({ to: chatJid, type: 'delete', deletedMessageId: messageId });
  }

  async markRead(chatJid: string, messageIds: string[]): Promise<void> {
    const me = this.#requireConnected();
    if (chatJid.endsWith(`@${USER_DOMAIN}`)) {
      await this.#send(chatJid, { t: 'receipt', from: me, status: 'read', ids: messageIds, timestamp: Date.now() }).catch(() => 0);
    }
  }

  async setPresence(available: boolean): Promise<void> {
    this.#requireConnected();
    await this.o.auth.set({ presence: available ? 'available' : 'unavailable' });
  }

  async rejectCall(callId: string, from: string): Promise<void> {
    const me = this.#requireConnected();
    await this.#record({ to: from, type: 'call_reject', call: { callId } });
    await this.#send(from, { t: 'call', from: me, callId, status: 'rejected', isVideo: false, timestamp: Date.now() }).catch(() => 0);
    this.o.emit({ type: 'call', callId, from, status: 'rejected', isVideo: false, isGroup: false, timestamp: Date.now() });
  }

  async offerCall(to: string, seconds: number): Promise<{ callId: string }> {
    const me = this.#requireConnected();
    const jid = toJid(to);
    const callId = randomBytes(16).toString('hex').toUpperCase();
    await this.#record({ to: jid, type: 'call_offer', call: { callId, durationSeconds: seconds } });
    await this.#send(jid, { t: 'call', from: me, callId, status: 'offer', isVideo: false, timestamp: Date.now() }).catch(() => 0);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#send(jid, { t: 'call', from: me, callId, status: 'terminated', isVideo: false, timestamp: Date.now() }).catch(() => 0);
    }, seconds * 1000);
    this.#timers.add(timer);
    return { callId };
  }

  async createCallLink(kind: 'audio' | 'video'): Promise<{ token: string; url: string }> {
    this.#requireConnected();
    const token = randomBytes(16).toString('base64url');
    return { token, url: `https://call.whatsapp.com/${kind === 'video' ? 'video' : 'voice'}/${token}` };
  }

  // ---- what the phone has: groups, labels, profile, privacy --------------------------------------

  /** Seeds a group the phone is in (POST /api/sandbox/group); emits `joined`. */
  async addGroup(subject: string, description: string, participants: { number: string; admin?: boolean }[]): Promise<SandboxGroup> {
    const me = this.#requireConnected();
    const group: SandboxGroup = {
      jid: `120363${String(randomInt(10 ** 12)).padStart(12, '0')}@g.us`,
      subject,
      description,
      creatorJid: me,
      participants: [{ jid: me, admin: 'superadmin' }, ...participants.map((p) => ({ jid: toJid(p.number), admin: p.admin ? ('admin' as const) : null }))],
    };
    await this.o.auth.set({ [`group:${group.jid}`]: JSON.stringify(group) });
    this.o.emit({ type: 'group', groupJid: group.jid, action: 'joined', participants: group.participants.map((p) => ({ jid: p.jid })), groupName: subject, timestamp: Date.now() });
    return group;
  }

  async listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    this.#requireConnected();
    return [...(await this.o.auth.list('group:')).values()].map((raw) => {
      const g = JSON.parse(raw) as SandboxGroup;
      return {
        jid: g.jid,
        name: g.subject,
        description: g.description,
        creatorJid: g.creatorJid,
        memberCount: g.participants.length,
        ...(includeMembers
          ? { members: g.participants.map((p) => ({ jid: p.jid, isAdmin: p.admin !== null, isSuperAdmin: p.admin === 'superadmin' })) }
          : {}),
      };
    });
  }

  /** Sets a chat's labels as the phone would (POST /api/sandbox/labels); emits a label event. */
  async setLabels(chat: string, labels: { id: string; name: string }[]): Promise<void> {
    this.#requireConnected();
    const chatJid = toJid(chat);
    await this.o.auth.set({ [`labels:${chatJid}`]: labels.length ? JSON.stringify(labels) : null });
    this.o.emit({ type: 'labels', chatJid, labels, action: labels.length ? 'add' : 'remove', timestamp: Date.now() });
  }

  async chatLabels(): Promise<ChatLabels[]> {
    this.#requireConnected();
    return [...(await this.o.auth.list('labels:')).entries()].map(([key, raw]) => ({
      chatJid: key.slice('labels:'.length),
      labels: JSON.parse(raw) as { id: string; name: string }[],
    }));
  }

  async updateProfile(changes: ProfileChanges): Promise<void> {
    this.#requireConnected();
    const current = JSON.parse((await this.o.auth.get('profile')) ?? '{}') as Record<string, unknown>;
    if (changes.picture !== undefined) current.picture = changes.picture ? { bytes: changes.picture.length } : null;
    if (changes.name !== undefined) current.name = changes.name;
    if (changes.status !== undefined) current.status = changes.status;
    await this.o.auth.set({ profile: JSON.stringify(current) });
  }

  async getPrivacy(): Promise<PrivacySettings> {
    this.#requireConnected();
    return { ...DEFAULT_PRIVACY, ...(JSON.parse((await this.o.auth.get('privacy')) ?? '{}') as Partial<PrivacySettings>) };
  }

  async setPrivacy(field: PrivacyField, value: string): Promise<void> {
    const current = await this.getPrivacy();
    await this.o.auth.set({ privacy: JSON.stringify({ ...current, [field]: value }) });
  }

  async lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    this.#requireConnected();
    const jid = toJid(number);
    const online = await this.#send(jid, { t: 'ping' });
    if (online === 0 && jid !== this.#numberJid) return { found: false, jid: undefined, lid: undefined };
    return { found: true, jid, lid: undefined };
  }
}
