import { randomBytes, randomInt } from 'node:crypto';
import type { Transport } from '../../transport/transport.js';
import {
  NetworkUnreachableError,
  ConflictError,
  MediaUploadError,
  NotConnectedError,
  NotFoundError,
  PayloadTooLargeError,
  ValidationError,
} from '../../errors.js';
import { channels } from '../../redis/keys.js';
import type { ConnectionState } from '../../store/records.js';
import type {
  Button,
  ChatLabels,
  ChatPresence,
  EventCard,
  Location,
  GroupInfo,
  LabelInfo,
  LinkChallenge,
  LinkPreview,
  LinkRequest,
  MessageContent,
  MsgNetSession,
  OutgoingMedia,
  PixPayment,
  PrivacyField,
  PrivacySettings,
  ProfileInfo,
  ProfileChanges,
  ReceivedMedia,
  SendOptions,
  SentMessage,
  SessionOptions,
  StatusPost,
} from '../msgnet-driver.js';
import type { MessageType, NormalizedMessage } from '../msgnet-events.js';
import { SandboxPhone, USER_DOMAIN, outboxMedia, toJid } from './sandbox-phone.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';
import { BoundedMap } from '../../util/bounded-map.js';
import { newMessageId } from '../message-id.js';
import { SandboxControls, registerControls } from './sandbox-controls.js';
import { sandboxSend } from './sandbox-content.js';
import { SandboxChats } from './sandbox-chats.js';
import { SandboxChannels } from './sandbox-channels.js';
import { SandboxCommunities } from './sandbox-communities.js';
import { SandboxGroups } from './sandbox-groups.js';
import type { SandboxDomain, SandboxNet, SandboxOps } from './sandbox-net.js';

/** A preview card as the outbox shows it: the thumbnail's size, not its bytes. */
function outboxPreview({ thumbnail, ...card }: LinkPreview): OutboxEntry['linkPreview'] {
  return { ...card, ...(thumbnail ? { thumbnailBytes: Buffer.from(thumbnail, 'base64').length } : {}) };
}

/** What a message on the wire is, as the receiving phone shows it. */
function typeOf(wire: Extract<SandboxWire, { t: 'msg' }>): MessageType {
  if (wire.kind) return wire.kind;
  if (wire.buttonReplyId) return 'buttons_response';
  return wire.media ? 'media' : wire.location ? 'location' : 'text';
}

/** How many received files a sandbox session keeps for `downloadMedia` (oldest dropped first). */
const RECEIVED_MEDIA_KEPT = 256;

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
  /** Failures to simulate, by operation, each used once (in memory: a failover forgets them). */
  readonly #faults = new Map<string, string>();
  /** Bytes of recently received media by message id, as a phone keeps them until they are downloaded. */
  readonly #receivedMedia = new BoundedMap<string, ReceivedMedia>(RECEIVED_MEDIA_KEPT);
  readonly #phone: SandboxPhone;
  #sent = 0;
  /** Subscriptions beyond the number's own: the groups and channels the phone is in. */
  readonly #listening = new Map<string, () => Promise<void>>();
  readonly groups: SandboxGroups;
  readonly chats: SandboxChats;
  readonly channels: SandboxChannels;
  readonly communities: SandboxCommunities;
  readonly #ops: Record<SandboxDomain, SandboxOps>;

  constructor(
    private readonly options: SessionOptions,
    private readonly transport: Transport,
  ) {
    this.#phone = new SandboxPhone(options.auth);
    const net: SandboxNet = {
      me: () => this.#requireConnected(),
      auth: options.auth,
      phone: this.#phone,
      emit: (event) => {
        if (!this.#closed) options.emit(event);
      },
      failIf: (operation) => this.#failIf(operation),
      publish: (jid, wire) => this.#send(jid, wire),
      listen: (jid) => this.#listen(jid),
      unlisten: async (jid) => {
        const stop = this.#listening.get(jid);
        this.#listening.delete(jid);
        await stop?.();
      },
      record: (entry) => this.#record(entry),
    };
    this.groups = new SandboxGroups(net);
    this.chats = new SandboxChats(net);
    this.channels = new SandboxChannels(net);
    this.communities = new SandboxCommunities(net);
    this.#ops = { groups: this.groups, chats: this.chats, channels: this.channels, communities: this.communities };
    registerControls(
      this,
      new SandboxControls({
        phone: this.#phone,
        auth: options.auth,
        faults: this.#faults,
        emit: (event) => options.emit(event),
        requireConnected: () => this.#requireConnected(),
        receive: (wire) => this.#receive(wire),
        link: (number) => this.#link(number),
      }),
    );
  }

  get state(): ConnectionState {
    return this.#state;
  }

  get numberJid(): string | undefined {
    return this.#numberJid;
  }

  #set(
    state: ConnectionState,
    extra: { qrCode?: string; reason?: string; error?: string; profileName?: string } = {},
  ): void {
    this.#state = state;
    if (this.#closed) return;
    this.options.emit({
      type: 'connection',
      state,
      ...(this.#numberJid ? { numberJid: this.#numberJid } : {}),
      ...extra,
    });
  }

  async resume(): Promise<void> {
    const creds = await this.options.auth.get('creds');
    if (!creds) return;
    this.#numberJid = (JSON.parse(creds) as { numberJid: string }).numberJid;
    await this.#goOnline();
  }

  async #goOnline(): Promise<void> {
    this.#set('connecting');
    await this.#unsubscribe?.();
    this.#unsubscribe = await this.transport.subscribe(channels.sandboxNumber(this.#numberJid!), (raw) =>
      this.#onWire(raw),
    );
    await this.#stopListening();
    for (const ops of Object.values(this.#ops)) {
      for (const jid of await ops.listening()) await this.#listen(jid);
    }
    // The network reports the push name on connect, as WhatsApp does.
    const { name } = await this.#phone.profile();
    this.#set('connected', name ? { profileName: name } : {});
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    if (this.#state === 'connected' && this.#numberJid) return { status: 'connected', numberJid: this.#numberJid };
    // The `network` fault: the network cannot be reached this once, as when its host does not resolve.
    const unreachable = this.#faults.get('network');
    if (unreachable !== undefined) {
      this.#faults.delete('network');
      this.#set('disconnected', { reason: 'network unreachable', error: unreachable });
      throw new NetworkUnreachableError(unreachable);
    }
    if (await this.options.auth.get('creds')) {
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

  /** What the phone does when it scans the QR or enters the code. */
  async #link(number: string | undefined): Promise<string> {
    if (this.#state !== 'qr' || !this.#pending) throw new ConflictError('Instance is not waiting for a link');
    const digits =
      number?.replace(/\D/g, '') || this.#pending.pairingPhone || `5599${String(randomInt(10 ** 9)).padStart(9, '0')}`;
    if (!/^\d{8,15}$/.test(digits)) throw new ValidationError('number must be 8 to 15 digits');
    const jid = `${digits}@${USER_DOMAIN}`;
    if (
      (await this.transport.publish(channels.sandboxNumber(jid), JSON.stringify({ t: 'ping' } satisfies SandboxWire))) >
      0
    ) {
      throw new ConflictError('That number is already linked to another sandbox instance');
    }
    await this.options.auth.set({ creds: JSON.stringify({ numberJid: jid, linkedAt: new Date().toISOString() }) });
    this.#pending = undefined;
    this.#numberJid = jid;
    await this.#goOnline();
    return jid;
  }

  /** Listens on a group's or channel's JID too (its messages and changes), until the session goes offline. */
  async #listen(jid: string): Promise<void> {
    if (this.#listening.has(jid)) return;
    this.#listening.set(jid, await this.transport.subscribe(channels.sandboxNumber(jid), (raw) => this.#onWire(raw)));
  }

  async #stopListening(): Promise<void> {
    const stops = [...this.#listening.values()];
    this.#listening.clear();
    await Promise.all(stops.map((stop) => stop()));
  }

  async logout(): Promise<void> {
    await this.#stopListening();
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    await this.options.auth.clear();
    this.#pending = undefined;
    this.#set('loggedout', { reason: 'logged out' });
    this.#numberJid = undefined;
  }

  async reconnect(): Promise<void> {
    if (!(await this.options.auth.get('creds'))) {
      throw new ValidationError('Instance has no saved link; connect it first');
    }
    await this.#stopListening();
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
    this.#set('disconnected', { reason: 'reconnect requested' });
    await this.resume();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const t of this.#timers) clearTimeout(t);
    await this.#stopListening();
    await this.#unsubscribe?.();
    this.#unsubscribe = undefined;
  }

  // ---- the simulated network -------------------------------------------------------------------

  #requireConnected(): string {
    if (this.#state !== 'connected' || !this.#numberJid) throw new NotConnectedError();
    return this.#numberJid;
  }

  #failIf(operation: string): void {
    const message = this.#faults.get(operation);
    if (message === undefined) return;
    this.#faults.delete(operation);
    throw operation === 'uploadMedia' ? new MediaUploadError({ cause: new Error(message) }) : new Error(message);
  }

  async #send(to: string, wire: SandboxWire): Promise<number> {
    return this.transport.publish(channels.sandboxNumber(to), JSON.stringify(wire));
  }

  #onWire(raw: string): void {
    const wire = JSON.parse(raw) as SandboxWire;
    if (wire.t === 'ping' || this.#closed) return;
    if (wire.t === 'ops') {
      // A phone hears its own group and channel changes on their JIDs: it has applied them already.
      if (wire.from !== this.#numberJid) this.#ops[wire.domain].onWire(wire.from, wire.payload);
      return;
    }
    // Our own message to a group, heard on the group's JID like every member hears it.
    if (wire.t === 'msg' && wire.groupJid && wire.from === this.#numberJid) return;
    // Our own channel post, heard on the channel's JID the owner listens on.
    if (wire.t === 'msg' && wire.newsletterJid && wire.from === this.#numberJid) return;
    if (wire.t === 'receipt') {
      this.options.emit({
        type: 'delivery',
        chatJid: wire.from,
        recipient: wire.from,
        status: wire.status,
        messageIds: wire.ids,
        timestamp: wire.timestamp,
      });
    } else if (wire.t === 'call') {
      this.options.emit({
        type: 'call',
        callId: wire.callId,
        from: wire.from,
        status: wire.status,
        isVideo: wire.isVideo,
        isGroup: false,
        timestamp: wire.timestamp,
      });
    } else if (wire.newsletterJid) {
      // A channel post: a channel is no contact (no block applies) and its followers send it no receipt.
      this.#receive(wire);
    } else {
      // A blocked contact's messages never reach the phone (and get no delivery receipt).
      if (this.chats.isBlocked(wire.from)) return;
      this.#receive(wire);
      // The phone acknowledges delivery at once, as WhatsApp does while online.
      void this.#send(wire.from, {
        t: 'receipt',
        from: this.#numberJid!,
        status: 'delivered',
        ids: [wire.id],
        timestamp: Date.now(),
      }).catch(() => undefined);
    }
  }

  #receive(wire: Extract<SandboxWire, { t: 'msg' }>): void {
    let media: NormalizedMessage['media'];
    if (wire.media) {
      const { base64, ...meta } = wire.media;
      media = meta;
      if (base64 !== undefined) {
        const data = Buffer.from(base64, 'base64');
        this.#receivedMedia.set(wire.id, {
          data,
          mimetype: meta.mimetype,
          ...(meta.fileName ? { fileName: meta.fileName } : {}),
        });
        media = { ...meta, size: meta.size ?? data.length };
      }
    }
    const message: NormalizedMessage = {
      id: wire.id,
      fromMe: false,
      timestamp: wire.timestamp,
      chat: wire.groupJid
        ? { jid: wire.groupJid, type: 'group' }
        : { jid: wire.from, type: 'private', ...(wire.pushName ? { name: wire.pushName } : {}) },
      sender: { jid: wire.from, ...(wire.pushName ? { name: wire.pushName } : {}) },
      type: typeOf(wire),
      text: wire.text,
      ...wire.details,
      ...(media ? { media } : {}),
      ...(wire.buttonReplyId ? { selectedButtonId: wire.buttonReplyId } : {}),
      ...(wire.mentions?.length ? { mentions: wire.mentions } : {}),
      ...(wire.location ? { location: wire.location } : {}),
    };
    if (wire.newsletterJid) {
      // A channel post comes from the channel itself, under the channel's name, as WhatsApp shows it.
      const name = wire.pushName ? { name: wire.pushName } : {};
      message.chat = { jid: wire.newsletterJid, type: 'newsletter', ...name };
      message.sender = { jid: wire.newsletterJid, ...name };
    }
    this.options.emit({ type: 'message', message });
  }

  async #record(entry: Omit<OutboxEntry, 'messageId' | 'timestamp'> & { messageId?: string }): Promise<OutboxEntry> {
    const full: OutboxEntry = { ...entry, messageId: entry.messageId ?? newMessageId(), timestamp: Date.now() };
    // The key sorts by time, then by a per-session sequence (two sends in one millisecond keep their order).
    const key = `outbox:${String(full.timestamp).padStart(15, '0')}:${String(++this.#sent).padStart(9, '0')}:${full.messageId}`;
    // A caller-chosen id is indexed in the same write, so a repeated send finds it (#sentBefore).
    const index = entry.messageId ? { [`sentid:${full.messageId}`]: JSON.stringify(full) } : {};
    await this.options.auth.set({ [key]: JSON.stringify(full), ...index });
    return full;
  }

  /** The network keeps one message per id: a send repeating a caller-chosen id answers the first one. */
  async #sentBefore(options: SendOptions | undefined): Promise<SentMessage | undefined> {
    if (!options?.messageId) return undefined;
    const raw = await this.options.auth.get(`sentid:${options.messageId}`);
    if (!raw) return undefined;
    const first = JSON.parse(raw) as OutboxEntry;
    return { messageId: first.messageId, timestamp: first.timestamp };
  }

  async #deliver(to: string, entry: OutboxEntry, wire: Extract<SandboxWire, { t: 'msg' }>): Promise<SentMessage> {
    const me = this.#numberJid!;
    this.options.emit({
      type: 'message',
      message: {
        id: entry.messageId,
        fromMe: true,
        timestamp: entry.timestamp,
        chat: { jid: to, type: to.endsWith('@g.us') ? 'group' : 'private' },
        sender: { jid: me },
        type: typeOf(wire),
        text: wire.text,
        ...wire.details,
        ...(wire.media ? { media: wire.media } : {}),
        ...(wire.mentions ? { mentions: wire.mentions } : {}),
        ...(wire.location ? { location: wire.location } : {}),
      },
    });
    this.options.emit({
      type: 'delivery',
      chatJid: to,
      recipient: to,
      status: 'sent',
      messageIds: [entry.messageId],
      timestamp: entry.timestamp,
    });
    await this.#send(to, wire).catch(() => 0);
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }

  async downloadMedia(message: NormalizedMessage, maxBytes: number): Promise<ReceivedMedia> {
    this.#failIf('downloadMedia');
    const media = this.#receivedMedia.get(message.id);
    if (!media) throw new NotFoundError('Media not available');
    if (media.data.length > maxBytes) throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    return media;
  }

  async sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage> {
    const mentions = options?.mentions?.length ? { mentions: options.mentions } : {};
    const preview = options?.linkPreview ? { linkPreview: outboxPreview(options.linkPreview) } : {};
    return this.#sendOne(
      to,
      options,
      ['sendText'],
      { type: 'text', text, ...mentions, ...preview },
      { text, ...mentions },
    );
  }

  async sendLocation(to: string, location: Location, options?: SendOptions): Promise<SentMessage> {
    return this.#sendOne(
      to,
      options,
      ['sendLocation'],
      { type: 'location', location },
      { text: location.name ?? '', location },
    );
  }

  async sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    const meta = outboxMedia(media);
    return this.#sendOne(
      to,
      options,
      ['uploadMedia', 'sendMedia'],
      { type: 'media', media: meta },
      { text: media.caption ?? '', media: meta },
    );
  }

  async sendButtons(to: string, text: string, buttons: Button[], options?: SendOptions): Promise<SentMessage> {
    return this.#sendOne(to, options, [], { type: 'buttons', text, buttons }, { text });
  }

  async sendPayment(to: string, payment: PixPayment, options?: SendOptions): Promise<SentMessage> {
    return this.#sendOne(to, options, [], { type: 'payment', payment }, { text: '' });
  }

  /**
   * One outgoing message: refused while not connected, answered again for an id it already sent, failed
   * by the faults set on `operations`, recorded in the outbox, then echoed as this instance's own message
   * and carried to `to`.
   */
  async #sendOne(
    to: string,
    options: SendOptions | undefined,
    operations: string[],
    entry: Omit<OutboxEntry, 'messageId' | 'timestamp' | 'to' | 'replyTo'>,
    wire: Omit<Extract<SandboxWire, { t: 'msg' }>, 't' | 'id' | 'from' | 'timestamp'>,
  ): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    const again = await this.#sentBefore(options);
    if (again) return again;
    for (const operation of operations) this.#failIf(operation);
    const recorded = await this.#record({
      to: jid,
      ...entry,
      ...(options?.replyTo ? { replyTo: options.replyTo.id } : {}),
      ...(options?.messageId ? { messageId: options.messageId } : {}),
    });
    return this.#deliver(jid, recorded, {
      t: 'msg',
      id: recorded.messageId,
      from,
      timestamp: recorded.timestamp,
      // Members listening on the group's JID receive it as a group message.
      ...(jid.endsWith('@g.us') ? { groupJid: jid } : {}),
      ...wire,
    });
  }

  async sendEventCard(to: string, card: EventCard): Promise<SentMessage> {
    const from = this.#requireConnected();
    const jid = toJid(to);
    this.#failIf('sendEventCard');
    const entry = await this.#record({ to: jid, type: 'event', event: card });
    return this.#deliver(jid, entry, {
      t: 'msg',
      id: entry.messageId,
      from,
      timestamp: entry.timestamp,
      text: card.name,
    });
  }

  async publishStatus(post: StatusPost): Promise<SentMessage> {
    const me = this.#requireConnected();
    if (post.media) this.#failIf('uploadMedia');
    this.#failIf('publishStatus');
    const media = post.media ? outboxMedia(post.media) : undefined;
    const entry = await this.#record({
      to: 'status@broadcast',
      type: 'status',
      text: post.text,
      status: {
        type: post.type,
        ...(post.backgroundColor ? { backgroundColor: post.backgroundColor } : {}),
        ...(post.font !== undefined ? { font: post.font } : {}),
      },
      ...(media ? { media } : {}),
    });
    // WhatsApp echoes the phone's own status back to it, like any message it sends.
    this.options.emit({
      type: 'message',
      message: {
        id: entry.messageId,
        fromMe: true,
        timestamp: entry.timestamp,
        chat: { jid: 'status@broadcast', type: 'status' },
        sender: { jid: me },
        type: media ? 'media' : 'text',
        text: post.text,
        ...(media ? { media } : {}),
      },
    });
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }

  async sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage> {
    const { operations, entry, wire } = sandboxSend(content);
    return this.#sendOne(to, options, operations, entry, wire);
  }

  async sendChatPresence(to: string, state: ChatPresence): Promise<void> {
    this.#requireConnected();
    await this.#record({ to: toJid(to), type: 'presence', presence: state });
  }

  async deleteMessage(chatJid: string, messageId: string): Promise<void> {
    this.#requireConnected();
    await this.#record({ to: chatJid, type: 'delete', deletedMessageId: messageId });
  }

  async markRead(chatJid: string, messageIds: string[]): Promise<void> {
    const me = this.#requireConnected();
    if (chatJid.endsWith(`@${USER_DOMAIN}`)) {
      await this.#send(chatJid, {
        t: 'receipt',
        from: me,
        status: 'read',
        ids: messageIds,
        timestamp: Date.now(),
      }).catch(() => 0);
    }
  }

  async setPresence(available: boolean): Promise<void> {
    this.#requireConnected();
    await this.options.auth.set({ presence: available ? 'available' : 'unavailable' });
  }

  async rejectCall(callId: string, from: string): Promise<void> {
    const me = this.#requireConnected();
    await this.#record({ to: from, type: 'call_reject', call: { callId } });
    await this.#send(from, {
      t: 'call',
      from: me,
      callId,
      status: 'rejected',
      isVideo: false,
      timestamp: Date.now(),
    }).catch(() => 0);
    this.options.emit({
      type: 'call',
      callId,
      from,
      status: 'rejected',
      isVideo: false,
      isGroup: false,
      timestamp: Date.now(),
    });
  }

  async offerCall(to: string, seconds: number): Promise<{ callId: string }> {
    const me = this.#requireConnected();
    const jid = toJid(to);
    this.#failIf('offerCall');
    const callId = randomBytes(16).toString('hex').toUpperCase();
    await this.#record({ to: jid, type: 'call_offer', call: { callId, durationSeconds: seconds } });
    await this.#send(jid, {
      t: 'call',
      from: me,
      callId,
      status: 'offer',
      isVideo: false,
      timestamp: Date.now(),
    }).catch(() => 0);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.#send(jid, {
        t: 'call',
        from: me,
        callId,
        status: 'terminated',
        isVideo: false,
        timestamp: Date.now(),
      }).catch(() => 0);
    }, seconds * 1000);
    this.#timers.add(timer);
    return { callId };
  }

  async createCallLink(kind: 'audio' | 'video'): Promise<{ token: string; url: string }> {
    this.#requireConnected();
    this.#failIf('createCallLink');
    const token = randomBytes(16).toString('base64url');
    return { token, url: `https://call.whatsapp.com/${kind === 'video' ? 'video' : 'voice'}/${token}` };
  }

  // ---- what the phone has: groups, labels, profile, privacy --------------------------------------

  async listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    this.#requireConnected();
    this.#failIf('listGroups');
    return this.#phone.groups(includeMembers);
  }

  /** What the session stored from label events; a refresh asks the network again, so it needs the connection. */
  async chatLabels(refresh = false): Promise<ChatLabels[]> {
    if (refresh) {
      this.#requireConnected();
      this.#failIf('chatLabels');
    }
    return this.#phone.chatLabels();
  }

  async listLabels(): Promise<LabelInfo[]> {
    return this.#phone.labels();
  }

  async assignLabels(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    this.#requireConnected();
    const jid = toJid(chatJid);
    const { after, changed } = await this.#phone.assignLabels(jid, labelIds, add);
    if (changed.length) {
      this.options.emit({
        type: 'labels',
        chatJid: jid,
        labels: changed,
        action: add ? 'add' : 'remove',
        timestamp: Date.now(),
      });
    }
    return { chatJid: jid, labels: after };
  }

  async updateProfile(changes: ProfileChanges): Promise<void> {
    this.#requireConnected();
    const current = await this.#phone.profile();
    if (changes.picture !== undefined) {
      this.#failIf('updateProfile:picture');
      current.picture = changes.picture ? changes.picture.toString('base64') : null;
    }
    if (changes.name !== undefined) {
      this.#failIf('updateProfile:name');
      current.name = changes.name;
    }
    if (changes.status !== undefined) {
      this.#failIf('updateProfile:status');
      current.status = changes.status;
    }
    await this.#phone.saveProfile(current);
  }

  /**
   * The phone's own profile, or a contact's: the simulated network models only its own phones' profiles,
   * so a contact is found when its number is online, with no name, About or picture.
   */
  async getProfile(jid?: string): Promise<ProfileInfo | undefined> {
    const me = this.#requireConnected();
    if (jid === undefined || jid === me) {
      const p = await this.#phone.profile();
      return {
        jid: me,
        name: p.name ?? null,
        about: p.status ?? null,
        pictureUrl: p.picture ? `data:image/jpeg;base64,${p.picture}` : null,
        isBusiness: false,
      };
    }
    const found = await this.lookup(jid);
    return found.found ? { jid: found.jid!, name: null, about: null, pictureUrl: null, isBusiness: false } : undefined;
  }

  async getPrivacy(): Promise<PrivacySettings> {
    this.#requireConnected();
    return this.#phone.privacy();
  }

  async setPrivacy(field: PrivacyField, value: string): Promise<void> {
    const current = await this.getPrivacy();
    this.#failIf(`setPrivacy:${field}`);
    await this.#phone.savePrivacy({ ...current, [field]: value });
  }

  async lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    this.#requireConnected();
    const jid = toJid(number);
    const online = await this.#send(jid, { t: 'ping' });
    if (online === 0 && jid !== this.#numberJid) return { found: false, jid: undefined, lid: undefined };
    return { found: true, jid, lid: undefined };
  }
}
