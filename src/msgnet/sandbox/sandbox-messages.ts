import { NotFoundError, PayloadTooLargeError } from '../../errors.js';
import { BoundedMap } from '../../util/bounded-map.js';
import type { MessageContent } from '../message-content.js';
import type { Location, MsgNetEvent, NormalizedMessage } from '../msgnet-events.js';
import type { ChatPresence, MessageOps, ReceivedMedia } from '../ops/message-ops.js';
import type { LinkPreview, OutgoingMedia, SendOptions, SentMessage } from '../outgoing-types.js';
import { isCommunityJid } from './sandbox-communities.js';
import { sandboxSend } from './sandbox-content.js';
import { outgoingMessage } from './sandbox-message.js';
import type { SandboxNet } from './sandbox-net.js';
import { USER_DOMAIN, outboxMedia, toJid } from './sandbox-phone.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';

/** How many received files a sandbox session keeps for `downloadMedia` (oldest dropped first). */
const RECEIVED_MEDIA_KEPT = 256;

/** A preview card as the outbox shows it: the thumbnail's size, not its bytes. */
function outboxPreview({ thumbnail, ...card }: LinkPreview): OutboxEntry['linkPreview'] {
  return { ...card, ...(thumbnail ? { thumbnailBytes: Buffer.from(thumbnail, 'base64').length } : {}) };
}

/** What the sends read of their session beside the network. */
export interface SandboxSender {
  /** The linked number as it stands when a sent message is echoed. */
  numberJid(): string | undefined;
  /** The session's events, unfiltered: a send under way when the session closes still reports its message. */
  emit(event: MsgNetEvent): void;
}

/**
 * The simulated phone's messages: what it sends (each recorded in the outbox that GET /api/sandbox/outbox
 * shows), deletions, read receipts and chat presence, and the files of the messages it received.
 */
export class SandboxMessages implements MessageOps {
  /** Bytes of recently received media by message id, as a phone keeps them until they are downloaded. */
  readonly #received = new BoundedMap<string, ReceivedMedia>(RECEIVED_MEDIA_KEPT);

  constructor(
    private readonly net: SandboxNet,
    private readonly sender: SandboxSender,
  ) {}

  /** Keeps a received message's file for `downloadMedia`. */
  keepReceived(messageId: string, media: ReceivedMedia): void {
    this.#received.set(messageId, media);
  }

  async downloadMedia(message: NormalizedMessage, maxBytes: number): Promise<ReceivedMedia> {
    this.net.failIf('downloadMedia');
    const media = this.#received.get(message.id);
    if (!media) throw new NotFoundError('Media not available');
    if (media.data.length > maxBytes) throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    return media;
  }

  /** The network keeps one message per id: a send repeating a caller-chosen id answers the first one. */
  async #sentBefore(options: SendOptions | undefined): Promise<SentMessage | undefined> {
    if (!options?.messageId) return undefined;
    const raw = await this.net.auth.get(`sentid:${options.messageId}`);
    if (!raw) return undefined;
    const first = JSON.parse(raw) as OutboxEntry;
    return { messageId: first.messageId, timestamp: first.timestamp, acknowledged: true };
  }

  async #deliver(to: string, entry: OutboxEntry, wire: Extract<SandboxWire, { t: 'msg' }>): Promise<SentMessage> {
    const isCommunity = to.endsWith('@g.us') && (await isCommunityJid(this.net.auth, to).catch(() => false));
    const message = outgoingMessage(this.sender.numberJid()!, to, entry, wire, isCommunity);
    this.sender.emit({ type: 'message', message });
    this.sender.emit({
      type: 'delivery',
      chatJid: to,
      recipient: to,
      status: 'sent',
      messageIds: [entry.messageId],
      timestamp: entry.timestamp,
    });
    await this.net.publish(to, wire).catch(() => 0);
    return { messageId: entry.messageId, timestamp: entry.timestamp, acknowledged: true };
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
    const mentions = options?.mentions?.length ? { mentions: options.mentions } : {};
    return this.#sendOne(
      to,
      options,
      ['uploadMedia', 'sendMedia'],
      { type: 'media', media: meta, ...mentions },
      { text: media.caption ?? '', media: meta, ...mentions },
    );
  }

  async sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage> {
    const { operations, entry, wire } = sandboxSend(content);
    return this.#sendOne(to, options, operations, entry, wire);
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
    const from = this.net.me();
    const jid = toJid(to);
    const again = await this.#sentBefore(options);
    if (again) return again;
    for (const operation of operations) this.net.failIf(operation);
    const recorded = await this.net.record({
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

  async sendChatPresence(to: string, state: ChatPresence): Promise<void> {
    this.net.me();
    await this.net.record({ to: toJid(to), type: 'presence', presence: state });
  }

  async deleteMessage(chatJid: string, messageId: string): Promise<void> {
    this.net.me();
    await this.net.record({ to: chatJid, type: 'delete', deletedMessageId: messageId });
  }

  async markRead(chatJid: string, messageIds: string[]): Promise<void> {
    const me = this.net.me();
    if (chatJid.endsWith(`@${USER_DOMAIN}`)) {
      await this.net
        .publish(chatJid, {
          t: 'receipt',
          from: me,
          status: 'read',
          ids: messageIds,
          timestamp: Date.now(),
        })
        .catch(() => 0);
    }
  }
}
