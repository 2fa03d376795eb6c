import type { Logger } from 'pino';
import type { MiscMessageGenerationOptions, WAMessage, WAUrlInfo } from '@whiskeysockets/baileys';
import { NotFoundError, PayloadTooLargeError } from '../../errors.js';
import type { MessageContent } from '../message-content.js';
import type { Location, NormalizedMessage } from '../msgnet-events.js';
import type { ChatPresence, MessageOps, ReceivedMedia } from '../ops/message-ops.js';
import type { LinkPreview, OutgoingMedia, SendOptions, SentMessage } from '../outgoing-types.js';
import type { BaileysSessionDeps, ConnectionManager } from './connection-manager.js';
import { STATUS_JID, toJid } from './jids.js';
import { downloadFromNetwork, readBounded } from './media-download.js';
import * as out from './outgoing.js';
import { sendContent } from './send-content.js';
import { TtlCache } from './ttl-cache.js';

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

/** Messages through Baileys: sends, revokes, read receipts, chat presence, and received files from the CDN. */
export class BaileysMessages implements MessageOps {
  /** Files just downloaded: the media pipeline and the helpdesk bridge read one message's file once from the CDN. */
  readonly #downloaded = new TtlCache({ ttlMs: 2 * 60_000, maxEntries: 8 });

  constructor(
    private readonly conn: ConnectionManager,
    private readonly deps: BaileysSessionDeps,
    private readonly log: Logger,
  ) {}

  async sendText(to: string, text: string, options?: SendOptions): Promise<SentMessage> {
    const mentions = options?.mentions?.length ? { mentions: options.mentions } : {};
    const preview = options?.linkPreview ? { linkPreview: urlInfo(options.linkPreview) } : {};
    return out.send(this.conn.socket(), toJid(to), { text, ...mentions, ...preview }, baileysOptions(options));
  }

  async sendMedia(to: string, media: OutgoingMedia, options?: SendOptions): Promise<SentMessage> {
    const mentions = options?.mentions?.length && media.kind !== 'sticker' ? { mentions: options.mentions } : {};
    return out.send(
      this.conn.socket(),
      toJid(to),
      { ...out.mediaContent(media), ...mentions },
      baileysOptions(options),
    );
  }

  async sendLocation(to: string, place: Location, options?: SendOptions): Promise<SentMessage> {
    const location = {
      degreesLatitude: place.latitude,
      degreesLongitude: place.longitude,
      ...(place.name ? { name: place.name } : {}),
      ...(place.address ? { address: place.address } : {}),
    };
    return out.send(this.conn.socket(), toJid(to), { location }, baileysOptions(options));
  }

  async sendContent(to: string, content: MessageContent, options?: SendOptions): Promise<SentMessage> {
    const sock = this.conn.socket();
    const ctx = { sock, polls: this.conn.link!.polls, log: this.log };
    return sendContent(ctx, toJid(to), content, baileysOptions(options));
  }

  async deleteMessage(chatJid: string, messageId: string, fromMe: boolean): Promise<void> {
    const sock = this.conn.socket();
    const jid = toJid(chatJid);
    // A status revoke reaches only the list the status was sent to.
    const options =
      jid === STATUS_JID ? { statusJidList: this.conn.link!.audience.recipients(out.ownJid(sock)) } : undefined;
    await sock.sendMessage(jid, { delete: { remoteJid: jid, id: messageId, fromMe } }, options);
  }

  async markRead(chatJid: string, messageIds: string[], participant?: string): Promise<void> {
    const remoteJid = toJid(chatJid);
    await this.conn
      .socket()
      .readMessages(
        messageIds.map((id) => ({ remoteJid, id, fromMe: false, ...(participant ? { participant } : {}) })),
      );
  }

  async sendChatPresence(to: string, state: ChatPresence): Promise<void> {
    await this.conn.socket().sendPresenceUpdate(state, toJid(to));
  }

  async downloadMedia(message: NormalizedMessage, maxBytes: number, signal?: AbortSignal): Promise<ReceivedMedia> {
    const raw = this.conn.mediaMessages.get<WAMessage>(message.id);
    if (!raw || !message.media) throw new NotFoundError('Media not available');
    let data = this.#downloaded.get<Buffer>(message.id);
    if (data && data.length > maxBytes) throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    if (!data) {
      const download = this.deps.downloadMedia ?? downloadFromNetwork;
      data = await readBounded(
        await download(raw, this.conn.socket(), this.log, this.conn.downloadOptions()),
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
}
