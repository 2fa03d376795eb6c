import type { Logger } from 'pino';
import type { MiscMessageGenerationOptions, WABusinessProfile, WAUrlInfo } from '@whiskeysockets/baileys';
import { NotConnectedError, NotFoundError, PayloadTooLargeError, UnavailableError } from '../../errors.js';
import type { ConnectionState } from '../../store/records.js';
import type {
  BusinessProfile,
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
import { BaileysChannels } from './baileys-channels.js';
import { BaileysChats } from './baileys-chats.js';
import { BaileysCommunities } from './baileys-communities.js';
import { BaileysGroups } from './baileys-groups.js';
import { ConnectionManager } from './connection-manager.js';
import type { BaileysSessionDeps } from './connection-manager.js';
import { eventCardContent } from './content-messages.js';
import { buttonsContent, paymentContent } from './interactive-content.js';
import { STATUS_JID, digitsOf, toJid } from './jids.js';
import { downloadFromNetwork, readBounded } from './media-download.js';
import * as out from './outgoing.js';
import { sendContent } from './send-content.js';
import { TtlCache } from './ttl-cache.js';
import type { NormalizedMessage } from '../msgnet-events.js';
import type { WAMessage } from '@whiskeysockets/baileys';

export type { BaileysSessionDeps };

/** Baileys sends under a given id when asked (`messageId`), else under one of its own. */
function idOnly(options: SendOptions | undefined): MiscMessageGenerationOptions | undefined {
  return options?.messageId ? { messageId: options.messageId } : undefined;
}

/**
 * Baileys' options of a send: the id chosen beforehand, and the quoted message of a reply (Baileys builds
 * the quote's context from a WAMessage: its key, and its text as the quoted content).
 */
function baileysOptions(options: SendOptions | undefined): MiscMessageGenerationOptions | undefined {
  const quote = options?.replyTo;
  if (!options?.messageId && !quote) return undefined;
  return {
    ...(options?.messageId ? { messageId: options.messageId } : {}),
    ...(quote
      ? {
          quoted: {
            key: {
              remoteJid: quote.chatJid,
              id: quote.id,
              fromMe: quote.fromMe,
              ...(quote.chatJid.endsWith('@g.us') ? { participant: quote.senderJid } : {}),
            },
            message: { conversation: quote.text },
          },
        }
      : {}),
  };
}

/** The edge's preview card as Baileys carries it (it then builds the text's `extendedTextMessage`). */
function urlInfo(card: LinkPreview): WAUrlInfo {
  return {
    'canonical-url': card.url,
    'matched-text': card.url,
    title: card.title,
    ...(card.description ? { description: card.description } : {}),
    ...(card.thumbnail ? { jpegThumbnail: Buffer.from(card.thumbnail, 'base64') } : {}),
  };
}

export const OFFER_CALL_UNSUPPORTED = 'Ring-and-drop calls are not supported by the baileys driver';

/**
 * One instance's link to WhatsApp through Baileys, on its owner node: the `MsgNetSession` API over the
 * socket its `ConnectionManager` keeps, persisting the link only through the fenced `AuthStore`.
 */
export class BaileysSession implements MsgNetSession {
  readonly #conn: ConnectionManager;
  readonly #log: Logger;
  readonly #deps: BaileysSessionDeps;
  /** Files just downloaded: the media pipeline and the helpdesk bridge read one message's file once from the CDN. */
  readonly #downloaded = new TtlCache({ ttlMs: 2 * 60_000, maxEntries: 8 });
  readonly groups: BaileysGroups;
  readonly chats: BaileysChats;
  readonly channels: BaileysChannels;
  readonly communities: BaileysCommunities;

  constructor(
    o: SessionOptions,
    deps: BaileysSessionDeps,
    /** Told once the session has closed (the driver forgets it). */
    private readonly onClosed?: () => void,
  ) {
    // The actor's logger is bound to the instance already: one binding per key in a line.
    this.#log = o.log.child({ driver: 'baileys' });
    this.#deps = deps;
    this.#conn = new ConnectionManager(o, deps, this.#log);
    const socket = () => this.#conn.socket();
    this.groups = new BaileysGroups(socket);
    this.chats = new BaileysChats(socket);
    this.channels = new BaileysChannels(socket, async () => (await this.#conn.ensureLink()).auth);
    this.communities = new BaileysCommunities(socket);
  }

  get state(): ConnectionState {
    return this.#conn.state;
  }

  get numberJid(): string | undefined {
    return this.#conn.numberJid;
  }

  async resume(): Promise<void> {
    this.#conn.assertUsable();
    const link = await this.#conn.ensureLink();
    if (link.auth.registered && !this.#conn.hasSocket && !this.#conn.closed) this.#conn.startSocket();
  }

  async connect(request: LinkRequest): Promise<LinkChallenge> {
    const conn = this.#conn;
    conn.assertUsable();
    await conn.ensureLink();
    if (conn.state === 'connected' && conn.hasSocket && conn.numberJid) {
      return { status: 'connected', numberJid: conn.numberJid };
    }
    if (!conn.hasSocket && !conn.startSocket()) throw new NotConnectedError();
    const outcome = await conn.waitLink();
    if (outcome.kind === 'open') return { status: 'connected', numberJid: conn.numberJid! };
    if (request.method === 'qr') return { status: 'qr', qrCode: outcome.qr };
    // The first QR proves the socket is up; only then does the server accept a pairing request.
    const sock = conn.currentSocket();
    if (!sock) throw new NotConnectedError();
    const pairingCode = await sock.requestPairingCode(digitsOf(request.phoneNumber));
    return { status: 'pairing', pairingCode };
  }

  async logout(): Promise<void> {
    if (this.#conn.closed) return;
    await this.#conn.logout((sock) => sock.logout());
  }

  async reconnect(): Promise<void> {
    this.#conn.assertUsable();
    await this.#conn.ensureLink();
    this.#conn.resetBackoff();
    if (!this.#conn.startSocket()) throw new NotConnectedError();
  }

  async close(): Promise<void> {
    if (this.#conn.closed) return;
    await this.#conn.close();
    this.onClosed?.();
  }

  async sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage> {
    const mentions = options?.mentions?.length ? { mentions: options.mentions } : {};
    const preview = options?.linkPreview ? { linkPreview: urlInfo(options.linkPreview) } : {};
    return out.send(this.#conn.socket(), toJid(to), { text, ...mentions, ...preview }, baileysOptions(options));
  }

  async sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    return out.send(this.#conn.socket(), toJid(to), out.mediaContent(media), baileysOptions(options));
  }

  async sendButtons(to: string, text: string, buttons: Button[], options?: SendOptions): Promise<SentMessage> {
    const jid = toJid(to);
    return out.relay(this.#conn.socket(), jid, buttonsContent(jid, { text, buttons }), idOnly(options));
  }

  async sendPayment(to: string, payment: PixPayment, options?: SendOptions): Promise<SentMessage> {
    return out.relay(this.#conn.socket(), toJid(to), paymentContent(payment), idOnly(options));
  }

  async sendLocation(to: string, place: Location, options?: SendOptions): Promise<SentMessage> {
    const location = {
      degreesLatitude: place.latitude,
      degreesLongitude: place.longitude,
      ...(place.name ? { name: place.name } : {}),
      ...(place.address ? { address: place.address } : {}),
    };
    return out.send(this.#conn.socket(), toJid(to), { location }, baileysOptions(options));
  }

  async sendEventCard(to: string, card: EventCard): Promise<SentMessage> {
    const sock = this.#conn.socket();
    const joinLink =
      card.joinLink || (await out.createCallLink(sock, card.video ? 'video' : 'audio', card.startTime)).url;
    return out.relay(sock, toJid(to), eventCardContent({ ...card, joinLink }));
  }

  async publishStatus(post: StatusPost): Promise<SentMessage> {
    const sock = this.#conn.socket();
    return out.publishStatus(sock, post, this.#conn.link!.audience.recipients(out.ownJid(sock)));
  }

  async deleteMessage(chatJid: string, messageId: string, fromMe: boolean): Promise<void> {
    const sock = this.#conn.socket();
    const jid = toJid(chatJid);
    // A status revoke reaches only the list the status was sent to.
    const options =
      jid === STATUS_JID ? { statusJidList: this.#conn.link!.audience.recipients(out.ownJid(sock)) } : undefined;
    await sock.sendMessage(jid, { delete: { remoteJid: jid, id: messageId, fromMe } }, options);
  }

  async downloadMedia(message: NormalizedMessage, maxBytes: number, signal?: AbortSignal): Promise<ReceivedMedia> {
    const raw = this.#conn.mediaMessages.get<WAMessage>(message.id);
    if (!raw || !message.media) throw new NotFoundError('Media not available');
    let data = this.#downloaded.get<Buffer>(message.id);
    if (data && data.length > maxBytes) throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    if (!data) {
      const download = this.#deps.downloadMedia ?? downloadFromNetwork;
      data = await readBounded(
        await download(raw, this.#conn.socket(), this.#log, this.#conn.downloadOptions()),
        maxBytes,
        signal,
      );
      this.#downloaded.set(message.id, data);
    }
    return {
      data,
      mimetype: message.media.mimetype,
      ...(message.media.fileName ? { fileName: message.media.fileName } : {}),
    };
  }

  async markRead(chatJid: string, messageIds: string[], participant?: string): Promise<void> {
    const remoteJid = toJid(chatJid);
    await this.#conn
      .socket()
      .readMessages(
        messageIds.map((id) => ({ remoteJid, id, fromMe: false, ...(participant ? { participant } : {}) })),
      );
  }

  async setPresence(available: boolean): Promise<void> {
    await this.#conn.socket().sendPresenceUpdate(available ? 'available' : 'unavailable');
  }

  async rejectCall(callId: string, from: string): Promise<void> {
    // The call-creator must be the address the offer came from, which may be a LID the event did not show.
    await this.#conn.socket().rejectCall(callId, this.#conn.callers.get(callId) ?? toJid(from));
    this.#conn.callers.delete(callId);
  }

  async offerCall(_to: string, _seconds: number): Promise<{ callId: string }> {
    // No upstream API in any Baileys version; hand-built call stanzas are unofficial and draw bans.
    throw new UnavailableError(OFFER_CALL_UNSUPPORTED);
  }

  async createCallLink(kind: 'audio' | 'video', startTime?: number): Promise<{ token: string; url: string }> {
    return out.createCallLink(this.#conn.socket(), kind, startTime);
  }

  async listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    return out.listGroups(this.#conn.socket(), includeMembers, (group) => this.#conn.groupCache.set(group.id, group));
  }

  async updateProfile(changes: ProfileChanges): Promise<void> {
    return out.updateProfile(this.#conn.socket(), changes);
  }

  async getPrivacy(): Promise<PrivacySettings> {
    return out.getPrivacy(this.#conn.socket());
  }

  async setPrivacy(field: PrivacyField, value: string): Promise<void> {
    return out.setPrivacy(this.#conn.socket(), field, value);
  }

  async chatLabels(refresh: boolean): Promise<ChatLabels[]> {
    if (!refresh) return (await this.#conn.ensureLink()).labels.list();
    const sock = this.#conn.socket();
    const { labels } = this.#conn.link!;
    for (const { chatJid, labelId } of await out.refreshChatLabels(sock, labels)) {
      this.#conn.emit({
        type: 'labels',
        chatJid,
        labels: [{ id: labelId, name: labels.nameOf(labelId) }],
        action: 'remove',
        timestamp: Date.now(),
      });
    }
    return labels.list();
  }

  async getProfile(jid?: string): Promise<ProfileInfo | undefined> {
    const sock = this.#conn.socket();
    const me = sock.user?.id ? toJid(digitsOf(sock.user.id.split(':')[0]!.split('@')[0]!)) : undefined;
    let target = me;
    if (jid !== undefined && jid !== me) {
      const found = await this.lookup(jid);
      if (!found.found || !found.jid) return undefined;
      target = found.jid;
    }
    if (!target) throw new NotConnectedError();
    // Each part may be hidden by the contact's privacy settings: a refusal means "not shown", not an error.
    const [about, pictureUrl, business] = await Promise.all([
      sock.fetchStatus(target).then(
        (list) => statusText(list?.[0]),
        () => null,
      ),
      sock.profilePictureUrl(target, 'image').then(
        (url) => url ?? null,
        () => null,
      ),
      sock.getBusinessProfile(target).then(
        (b) => (b ? businessProfile(b) : undefined),
        () => undefined,
      ),
    ]);
    return {
      jid: target,
      name: target === me ? (sock.user?.name ?? null) : null,
      about,
      pictureUrl,
      isBusiness: business !== undefined,
      ...(business ? { business } : {}),
    };
  }

  async sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage> {
    const sock = this.#conn.socket();
    const ctx = { sock, polls: this.#conn.link!.polls, log: this.#log };
    return sendContent(ctx, toJid(to), content, baileysOptions(options));
  }

  async sendChatPresence(to: string, state: ChatPresence): Promise<void> {
    await this.#conn.socket().sendPresenceUpdate(state, toJid(to));
  }

  async listLabels(): Promise<LabelInfo[]> {
    return (await this.#conn.ensureLink()).labels.labels();
  }

  async assignLabels(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    const sock = this.#conn.socket();
    const { labels } = await this.#conn.ensureLink();
    const unknown = labelIds.find((id) => !labels.has(id));
    if (unknown !== undefined) throw new NotFoundError(`Label not found: ${unknown}`);
    const jid = toJid(chatJid);
    for (const id of labelIds) {
      // App-state patches: the phone and other devices see the change; the book is updated as Baileys
      // does not echo our own patches back as events.
      if (add) await sock.addChatLabel(jid, id);
      else await sock.removeChatLabel(jid, id);
      labels.associate(jid, id, add);
    }
    const after = labels.chat(jid);
    this.#conn.emit({
      type: 'labels',
      chatJid: jid,
      labels: after.labels,
      action: add ? 'add' : 'remove',
      timestamp: Date.now(),
    });
    return after;
  }

  async lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    return out.lookup(this.#conn.socket(), number.includes('@') ? number : digitsOf(number));
  }
}

/** A Business account's public profile as Baileys reads it. */
function businessProfile(b: WABusinessProfile): BusinessProfile {
  return {
    description: b.description || null,
    category: b.category ?? null,
    email: b.email ?? null,
    website: b.website ?? [],
    address: b.address ?? null,
  };
}

/** The About text from a fetchStatus result (`{status: {status, setAt}}` in Baileys 7). */
function statusText(entry: unknown): string | null {
  const status = (entry as { status?: { status?: unknown } } | undefined)?.status?.status;
  return typeof status === 'string' ? status : null;
}
