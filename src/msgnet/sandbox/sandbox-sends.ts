import type {
  Button,
  ChatPresence,
  EventCard,
  LinkPreview,
  Location,
  MessageContent,
  OutgoingMedia,
  PixPayment,
  SendOptions,
  SentMessage,
  StatusPost,
} from '../msgnet-driver.js';
import type { MsgNetEvent } from '../msgnet-events.js';
import { newMessageId } from '../message-id.js';
import { sandboxSend } from './sandbox-content.js';
import { outgoingMessage } from './sandbox-message.js';
import type { SandboxNet } from './sandbox-net.js';
import { USER_DOMAIN, outboxMedia, toJid } from './sandbox-phone.js';
import type { OutboxEntry, SandboxWire } from './sandbox-wire.js';

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
 * What the simulated phone sends: messages, status posts, chat presence, deletions and read receipts, each
 * recorded in the outbox (session store) that GET /api/sandbox/outbox shows.
 */
export class SandboxSends {
  #sent = 0;

  constructor(
    private readonly net: SandboxNet,
    private readonly sender: SandboxSender,
  ) {}

  async record(entry: Omit<OutboxEntry, 'messageId' | 'timestamp'> & { messageId?: string }): Promise<OutboxEntry> {
    const full: OutboxEntry = { ...entry, messageId: entry.messageId ?? newMessageId(), timestamp: Date.now() };
    // The key sorts by time, then by a per-session sequence (two sends in one millisecond keep their order).
    const key = `outbox:${String(full.timestamp).padStart(15, '0')}:${String(++this.#sent).padStart(9, '0')}:${full.messageId}`;
    // A caller-chosen id is indexed in the same write, so a repeated send finds it (#sentBefore).
    const index = entry.messageId ? { [`sentid:${full.messageId}`]: JSON.stringify(full) } : {};
    await this.net.auth.set({ [key]: JSON.stringify(full), ...index });
    return full;
  }

  /** The network keeps one message per id: a send repeating a caller-chosen id answers the first one. */
  async #sentBefore(options: SendOptions | undefined): Promise<SentMessage | undefined> {
    if (!options?.messageId) return undefined;
    const raw = await this.net.auth.get(`sentid:${options.messageId}`);
    if (!raw) return undefined;
    const first = JSON.parse(raw) as OutboxEntry;
    return { messageId: first.messageId, timestamp: first.timestamp };
  }

  async #deliver(to: string, entry: OutboxEntry, wire: Extract<SandboxWire, { t: 'msg' }>): Promise<SentMessage> {
    this.sender.emit({ type: 'message', message: outgoingMessage(this.sender.numberJid()!, to, entry, wire) });
    this.sender.emit({
      type: 'delivery',
      chatJid: to,
      recipient: to,
      status: 'sent',
      messageIds: [entry.messageId],
      timestamp: entry.timestamp,
    });
    await this.net.publish(to, wire).catch(() => 0);
    return { messageId: entry.messageId, timestamp: entry.timestamp };
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
    const from = this.net.me();
    const jid = toJid(to);
    const again = await this.#sentBefore(options);
    if (again) return again;
    for (const operation of operations) this.net.failIf(operation);
    const recorded = await this.record({
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
    const from = this.net.me();
    const jid = toJid(to);
    this.net.failIf('sendEventCard');
    const entry = await this.record({ to: jid, type: 'event', event: card });
    return this.#deliver(jid, entry, {
      t: 'msg',
      id: entry.messageId,
      from,
      timestamp: entry.timestamp,
      text: card.name,
    });
  }

  async publishStatus(post: StatusPost): Promise<SentMessage> {
    const me = this.net.me();
    if (post.media) this.net.failIf('uploadMedia');
    this.net.failIf('publishStatus');
    const media = post.media ? outboxMedia(post.media) : undefined;
    const entry = await this.record({
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
    this.sender.emit({
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
    this.net.me();
    await this.record({ to: toJid(to), type: 'presence', presence: state });
  }

  async deleteMessage(chatJid: string, messageId: string): Promise<void> {
    this.net.me();
    await this.record({ to: chatJid, type: 'delete', deletedMessageId: messageId });
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

  async setPresence(available: boolean): Promise<void> {
    this.net.me();
    await this.net.auth.set({ presence: available ? 'available' : 'unavailable' });
  }
}
