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
import type { NormalizedMessage } from '../msgnet-events.js';
import { SandboxPhone, USER_DOMAIN } from './sandbox-phone.js';
import type { SandboxWire } from './sandbox-wire.js';
import { BoundedMap } from '../../util/bounded-map.js';
import { SandboxControls, registerControls } from './sandbox-controls.js';
import { SandboxChats } from './sandbox-chats.js';
import { SandboxChannels } from './sandbox-channels.js';
import { SandboxCommunities } from './sandbox-communities.js';
import { SandboxGroups } from './sandbox-groups.js';
import type { SandboxDomain, SandboxNet, SandboxOps } from './sandbox-net.js';
import { SandboxAccount } from './sandbox-account.js';
import { SandboxCalls } from './sandbox-calls.js';
import { incomingMessage } from './sandbox-message.js';
import { SandboxSends } from './sandbox-sends.js';

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
  /** Failures to simulate, by operation, each used once (in memory: a failover forgets them). */
  readonly #faults = new Map<string, string>();
  /** Bytes of recently received media by message id, as a phone keeps them until they are downloaded. */
  readonly #receivedMedia = new BoundedMap<string, ReceivedMedia>(RECEIVED_MEDIA_KEPT);
  readonly #phone: SandboxPhone;
  /** Subscriptions beyond the number's own: the groups and channels the phone is in. */
  readonly #listening = new Map<string, () => Promise<void>>();
  readonly groups: SandboxGroups;
  readonly chats: SandboxChats;
  readonly channels: SandboxChannels;
  readonly communities: SandboxCommunities;
  readonly #ops: Record<SandboxDomain, SandboxOps>;
  readonly #calls: SandboxCalls;
  readonly #account: SandboxAccount;
  readonly #sends: SandboxSends;

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
      record: (entry) => this.#sends.record(entry),
    };
    this.groups = new SandboxGroups(net);
    this.chats = new SandboxChats(net);
    this.channels = new SandboxChannels(net);
    this.communities = new SandboxCommunities(net);
    this.#ops = { groups: this.groups, chats: this.chats, channels: this.channels, communities: this.communities };
    this.#calls = new SandboxCalls(net);
    this.#account = new SandboxAccount(net);
    this.#sends = new SandboxSends(net, { numberJid: () => this.#numberJid, emit: (event) => options.emit(event) });
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
    this.#calls.close();
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
    const { message, media } = incomingMessage(wire);
    if (media) this.#receivedMedia.set(wire.id, media);
    this.options.emit({ type: 'message', message });
  }

  async downloadMedia(message: NormalizedMessage, maxBytes: number): Promise<ReceivedMedia> {
    this.#failIf('downloadMedia');
    const media = this.#receivedMedia.get(message.id);
    if (!media) throw new NotFoundError('Media not available');
    if (media.data.length > maxBytes) throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    return media;
  }

  // ---- what the phone sends: messages, statuses, presence, receipts, calls ---------------------

  sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendText(to, text, options);
  }

  sendLocation(to: string, location: Location, options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendLocation(to, location, options);
  }

  sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendMedia(to, media, options);
  }

  sendButtons(to: string, text: string, buttons: Button[], options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendButtons(to, text, buttons, options);
  }

  sendPayment(to: string, payment: PixPayment, options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendPayment(to, payment, options);
  }

  sendEventCard(to: string, card: EventCard): Promise<SentMessage> {
    return this.#sends.sendEventCard(to, card);
  }

  publishStatus(post: StatusPost): Promise<SentMessage> {
    return this.#sends.publishStatus(post);
  }

  sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage> {
    return this.#sends.sendContent(to, content, options);
  }

  sendChatPresence(to: string, state: ChatPresence): Promise<void> {
    return this.#sends.sendChatPresence(to, state);
  }

  deleteMessage(chatJid: string, messageId: string): Promise<void> {
    return this.#sends.deleteMessage(chatJid, messageId);
  }

  markRead(chatJid: string, messageIds: string[]): Promise<void> {
    return this.#sends.markRead(chatJid, messageIds);
  }

  setPresence(available: boolean): Promise<void> {
    return this.#sends.setPresence(available);
  }

  rejectCall(callId: string, from: string): Promise<void> {
    return this.#calls.rejectCall(callId, from);
  }

  offerCall(to: string, seconds: number): Promise<{ callId: string }> {
    return this.#calls.offerCall(to, seconds);
  }

  createCallLink(kind: 'audio' | 'video'): Promise<{ token: string; url: string }> {
    return this.#calls.createCallLink(kind);
  }

  // ---- what the phone has: groups, labels, profile, privacy --------------------------------------

  listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    return this.#account.listGroups(includeMembers);
  }

  chatLabels(refresh = false): Promise<ChatLabels[]> {
    return this.#account.chatLabels(refresh);
  }

  listLabels(): Promise<LabelInfo[]> {
    return this.#account.listLabels();
  }

  assignLabels(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    return this.#account.assignLabels(chatJid, labelIds, add);
  }

  updateProfile(changes: ProfileChanges): Promise<void> {
    return this.#account.updateProfile(changes);
  }

  getProfile(jid?: string): Promise<ProfileInfo | undefined> {
    return this.#account.getProfile(jid);
  }

  getPrivacy(): Promise<PrivacySettings> {
    return this.#account.getPrivacy();
  }

  setPrivacy(field: PrivacyField, value: string): Promise<void> {
    return this.#account.setPrivacy(field, value);
  }

  lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    return this.#account.lookup(number);
  }
}
