import { getContentType, normalizeMessageContent, proto } from '@whiskeysockets/baileys';
import type { GroupParticipant, MessageUserReceiptUpdate, WAMessage, WAMessageUpdate } from '@whiskeysockets/baileys';
import type { MediaKind } from '../msgnet-driver.js';
import type { DeliveryEvent, NormalizedMessage, Party } from '../msgnet-events.js';
import { chatTypeOf, partyOf } from './jids.js';
import { int64 } from './int64.js';

/** Content types that carry nothing a user wrote (key shares, history notices, revokes…). */
const SILENT_CONTENT = new Set(['protocolMessage', 'senderKeyDistributionMessage', 'messageContextInfo']);

const MEDIA_FIELDS: Record<string, MediaKind> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

/** Our own addresses, to fill `sender` for messages we sent. */
export interface OwnIdentity {
  jid: string | undefined;
  lid: string | undefined;
  name: string | undefined;
}

type Body = Pick<NormalizedMessage, 'type' | 'text' | 'media' | 'selectedButtonId' | 'location'>;

/** A Baileys message to our one shape; `undefined` for messages with nothing to report. */
export function toNormalizedMessage(msg: WAMessage, own: OwnIdentity): NormalizedMessage | undefined {
  const { key } = msg;
  if (!key.remoteJid || !key.id) return undefined;
  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content);
  if (!content || !contentType || SILENT_CONTENT.has(contentType)) return undefined;
  const body = bodyOf(content, contentType);
  const chatType = chatTypeOf(key.remoteJid);
  const chat = partyOf(key.remoteJid, key.remoteJidAlt);
  const fromMe = !!key.fromMe;
  let sender: Party;
  if (fromMe && own.jid) {
    sender = { jid: own.jid, ...(own.lid ? { lid: own.lid } : {}), ...(own.name ? { name: own.name } : {}) };
  } else if (key.participant) {
    sender = partyOf(key.participant, key.participantAlt, msg.pushName);
  } else {
    sender = { ...chat, ...(msg.pushName ? { name: msg.pushName } : {}) };
  }
  const mentions = mentionsOf(content, contentType);
  return {
    id: key.id,
    fromMe,
    timestamp: (int64(msg.messageTimestamp) ?? Math.floor(Date.now() / 1000)) * 1000,
    chat: { ...chat, type: chatType },
    sender,
    ...body,
    ...(mentions.length ? { mentions } : {}),
  };
}

/** The JIDs a text or a caption mentions (`contextInfo.mentionedJid`). */
function mentionsOf(content: proto.IMessage, contentType: keyof proto.IMessage): string[] {
  const inner = content[contentType] as { contextInfo?: proto.IContextInfo | null } | null | undefined;
  return (inner?.contextInfo?.mentionedJid ?? []).filter((jid): jid is string => typeof jid === 'string');
}

function bodyOf(content: proto.IMessage, contentType: keyof proto.IMessage): Body {
  const kind = MEDIA_FIELDS[contentType];
  if (kind) {
    const media = content[contentType] as proto.Message.IDocumentMessage & { caption?: string | null };
    const size = int64(media.fileLength);
    return {
      type: 'media',
      text: media.caption ?? '',
      media: {
        kind,
        mimetype: media.mimetype ?? '',
        ...(media.fileName ? { fileName: media.fileName } : {}),
        ...(media.caption ? { caption: media.caption } : {}),
        ...(size !== undefined ? { size } : {}),
      },
    };
  }
  if (content.conversation !== undefined && content.conversation !== null) {
    return { type: 'text', text: content.conversation };
  }
  if (content.extendedTextMessage) return { type: 'text', text: content.extendedTextMessage.text ?? '' };
  if (content.locationMessage) {
    const l = content.locationMessage;
    return {
      type: 'location',
      text: l.name ?? '',
      location: {
        latitude: l.degreesLatitude ?? 0,
        longitude: l.degreesLongitude ?? 0,
        ...(l.name ? { name: l.name } : {}),
        ...(l.address ? { address: l.address } : {}),
      },
    };
  }
  if (content.buttonsResponseMessage) {
    const reply = content.buttonsResponseMessage;
    return buttonReply(reply.selectedButtonId, reply.selectedDisplayText);
  }
  if (content.templateButtonReplyMessage) {
    const reply = content.templateButtonReplyMessage;
    return buttonReply(reply.selectedId, reply.selectedDisplayText);
  }
  if (content.listResponseMessage) {
    const reply = content.listResponseMessage;
    return buttonReply(reply.singleSelectReply?.selectedRowId, reply.title);
  }
  if (content.interactiveResponseMessage) {
    const reply = content.interactiveResponseMessage;
    return buttonReply(nativeFlowId(reply.nativeFlowResponseMessage?.paramsJson), reply.body?.text);
  }
  if (content.interactiveMessage) return { type: 'interactive', text: content.interactiveMessage.body?.text ?? '' };
  if (content.reactionMessage) return { type: 'reaction', text: content.reactionMessage.text ?? '' };
  if (content.eventMessage) return { type: 'event', text: content.eventMessage.name ?? '' };
  if (content.requestPaymentMessage || content.sendPaymentMessage) return { type: 'payment', text: '' };
  return { type: 'other', text: '' };
}

function buttonReply(id: string | null | undefined, text: string | null | undefined): Body {
  return { type: 'buttons_response', text: text ?? '', ...(id ? { selectedButtonId: id } : {}) };
}

/** A native-flow reply carries the clicked button's params as JSON (`{"id": …}` for quick replies). */
function nativeFlowId(paramsJson: string | null | undefined): string | undefined {
  if (!paramsJson) return undefined;
  try {
    const params = JSON.parse(paramsJson) as { id?: unknown };
    return typeof params.id === 'string' ? params.id : undefined;
  } catch {
    return undefined;
  }
}

const STATUS_NAMES: Partial<Record<number, DeliveryEvent['status']>> = {
  [proto.WebMessageInfo.Status.ERROR]: 'failed',
  [proto.WebMessageInfo.Status.SERVER_ACK]: 'sent',
  [proto.WebMessageInfo.Status.DELIVERY_ACK]: 'delivered',
  [proto.WebMessageInfo.Status.READ]: 'read',
  [proto.WebMessageInfo.Status.PLAYED]: 'played',
};

/** `messages.update` status changes of messages we sent (1:1 chats), grouped by chat and status. */
export function deliveryFromUpdates(updates: WAMessageUpdate[], now: number): DeliveryEvent[] {
  const groups = new Map<string, DeliveryEvent>();
  for (const { key, update } of updates) {
    const status = typeof update.status === 'number' ? STATUS_NAMES[update.status] : undefined;
    if (!status || !key.fromMe || !key.remoteJid || !key.id) continue;
    const ts = int64(update.messageTimestamp);
    add(groups, key.remoteJid, key.remoteJid, status, key.id, ts ? ts * 1000 : now);
  }
  return [...groups.values()];
}

/** `message-receipt.update` (groups and statuses): one receipt per reader. */
export function deliveryFromReceipts(receipts: MessageUserReceiptUpdate[], now: number): DeliveryEvent[] {
  const groups = new Map<string, DeliveryEvent>();
  for (const { key, receipt } of receipts) {
    if (!key.fromMe || !key.remoteJid || !key.id || !receipt.userJid) continue;
    const played = int64(receipt.playedTimestamp);
    const read = int64(receipt.readTimestamp);
    const delivered = int64(receipt.receiptTimestamp);
    const [status, ts] = played
      ? (['played', played] as const)
      : read
        ? (['read', read] as const)
        : (['delivered', delivered] as const);
    add(groups, key.remoteJid, receipt.userJid, status, key.id, ts ? ts * 1000 : now);
  }
  return [...groups.values()];
}

function add(
  groups: Map<string, DeliveryEvent>,
  chatJid: string,
  recipient: string,
  status: DeliveryEvent['status'],
  id: string,
  timestamp: number,
): void {
  const groupKey = `${chatJid}\u0000${recipient}\u0000${status}`;
  const existing = groups.get(groupKey);
  if (existing) {
    existing.messageIds.push(id);
    existing.timestamp = Math.max(existing.timestamp, timestamp);
    return;
  }
  groups.set(groupKey, { type: 'delivery', chatJid, recipient, status, messageIds: [id], timestamp });
}

/** A group member as a party: v7 may give the LID as `id` and the phone number beside it. */
export function participantParty(p: GroupParticipant | string): Party {
  if (typeof p === 'string') return partyOf(p, undefined);
  return partyOf(p.id, p.phoneNumber ?? p.lid, p.notify ?? p.name);
}
