import { randomBytes, randomInt } from 'node:crypto';
import type { Transport } from '../../transport/transport.js';
import {
  NetworkUnreachableError,
  ConflictError,
  MediaUploadError,
  NotConnectedError,
  ValidationError,
} from '../../errors.js';
import { channels } from '../../redis/keys.js';
import type { ConnectionState } from '../../store/records.js';
import type { LinkChallenge, LinkRequest, MsgNetSession, SessionOptions } from '../msgnet-driver.js';
import type { ConnectionEvent, MsgNetEvent } from '../msgnet-events.js';
import { SandboxPhone, USER_DOMAIN } from './sandbox-phone.js';
import type { SandboxWire } from './sandbox-wire.js';
import { SandboxControls, registerControls } from './sandbox-controls.js';
import { SandboxChats } from './sandbox-chats.js';
import { SandboxChannels } from './sandbox-channels.js';
import { SandboxCommunities, isCommunityJid } from './sandbox-communities.js';
import { SandboxGroups } from './sandbox-groups.js';
import type { SandboxDomain, SandboxNet, SandboxOps } from './sandbox-net.js';
import { SandboxCalls } from './sandbox-calls.js';
import { SandboxLabels } from './sandbox-labels.js';
import { incomingMessage } from './sandbox-message.js';
import { SandboxMessages } from './sandbox-messages.js';
import { SandboxOutbox } from './sandbox-outbox.js';
import { SandboxPrivacy } from './sandbox-privacy.js';
import { SandboxProfiles } from './sandbox-profiles.js';
import { SandboxStatus } from './sandbox-status.js';

/**
 * One simulated phone. Its link, outbox, groups, labels, profile and privacy live in the session store
 * (instance-owned, fenced), so a new owner node resumes it after a failover without a new link. While
 * connected it listens on its number's channel for messages, receipts and calls from other numbers.
 */
export class SandboxSession implements MsgNetSession {
  #state: ConnectionState = 'disconnected';
  #numberJid: string | undefined;
  #pending: { pairingPhone?: string; historyDays?: number } | undefined;
  #outbox: SandboxOutbox;
  #unsubscribe: (() => Promise<void>) | undefined;
  #closed = false;
  /** Failures to simulate, by operation, each used once (in memory: a failover forgets them). */
  readonly #faults = new Map<string, string>();
  readonly #phone: SandboxPhone;
  /** Subscriptions beyond the number's own: the groups and channels the phone is in. */
  readonly #listening = new Map<string, () => Promise<void>>();
  readonly messages: SandboxMessages;
  readonly profile: SandboxProfiles;
  readonly privacy: SandboxPrivacy;
  readonly labels: SandboxLabels;
  readonly status: SandboxStatus;
  readonly calls: SandboxCalls;
  readonly groups: SandboxGroups;
  readonly chats: SandboxChats;
  readonly channels: SandboxChannels;
  readonly communities: SandboxCommunities;
  /** Received messages waiting to be reported, in order (see `#receive`). */
  #receiving: Promise<void> = Promise.resolve();
  #receivesWaiting = 0;
  /** The domains that hear each other's phones over the network. */
  readonly #ops: Record<SandboxDomain, SandboxOps>;

  constructor(
    private readonly options: SessionOptions,
    private readonly transport: Transport,
  ) {
    this.#phone = new SandboxPhone(options.auth);
    const outbox = new SandboxOutbox(options.auth);
    this.#outbox = outbox;
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
      record: (entry) => outbox.record(entry),
    };
    const sender = { numberJid: () => this.#numberJid, emit: (event: MsgNetEvent) => options.emit(event) };
    this.messages = new SandboxMessages(net, sender);
    this.profile = new SandboxProfiles(net);
    this.privacy = new SandboxPrivacy(net);
    this.labels = new SandboxLabels(net);
    this.status = new SandboxStatus(net, sender);
    this.calls = new SandboxCalls(net);
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
        saveContact: (jid, names) => this.chats.noteContact(jid, names),
        answerCall: (callId) => this.calls.answer(callId),
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
    extra: Partial<Pick<ConnectionEvent, 'qrCode' | 'reason' | 'error' | 'profileName' | 'business'>> = {},
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
    // The sandbox's numbers are personal accounts.
    this.#set('connected', { ...(name ? { profileName: name } : {}), business: { isBusiness: false } });
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
      this.#pending = { pairingPhone: phone, ...history(request) };
      const pairingCode = Array.from({ length: 8 }, () => 'ABCDEFGHJKLMNPQRSTVWXYZ23456789'[randomInt(30)]).join('');
      this.#set('qr');
      return { status: 'pairing', pairingCode };
    }
    this.#pending = history(request);
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
    // The days of history the link asked the phone for, as the registration carries them (the sandbox has no history).
    const { historyDays } = this.#pending;
    if (historyDays !== undefined) {
      await this.#outbox.record({
        to: jid,
        type: 'history_sync',
        operation: { name: 'historySync', days: historyDays },
      });
    }
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
    this.calls.close();
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
      this.calls.heard(wire);
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

  /**
   * A group message first reads whether its group is a community; the messages after it wait their turn,
   * so that none overtakes another. A private message with none waiting is reported at once.
   */
  #receive(wire: Extract<SandboxWire, { t: 'msg' }>): void {
    if (!wire.groupJid && this.#receivesWaiting === 0) {
      this.#report(wire, false);
      return;
    }
    this.#receivesWaiting++;
    this.#receiving = this.#receiving
      .then(async () => {
        const groupJid = wire.groupJid;
        const isCommunity = groupJid ? await isCommunityJid(this.options.auth, groupJid).catch(() => false) : false;
        this.#report(wire, isCommunity);
      })
      // A report that threw (the session closing) must not stop the ones after it.
      .catch(() => undefined)
      .finally(() => this.#receivesWaiting--);
  }

  #report(wire: Extract<SandboxWire, { t: 'msg' }>, isCommunity: boolean): void {
    const { message, media } = incomingMessage(wire, isCommunity);
    // The phone keeps the push name of whoever writes (its contact store), as WhatsApp Web does.
    if (wire.pushName && !wire.newsletterJid) this.chats.noteContact(wire.from, { pushName: wire.pushName });
    if (media) this.messages.keepReceived(wire.id, media);
    this.options.emit({ type: 'message', message });
  }
}

/** The days of history a connect asked for, kept until the link completes. */
function history(request: LinkRequest): { historyDays?: number } {
  return request.historyDays !== undefined ? { historyDays: request.historyDays } : {};
}
