import { getContentType, normalizeMessageContent, proto } from '@whiskeysockets/baileys';
import type { GroupParticipant, MessageUserReceiptUpdate, WAMessage, WAMessageUpdate } from '@whiskeysockets/baileys';
import type { DeliveryEvent, NormalizedMessage, Party } from '../msgnet-events.js';
import { chatTypeOf, partyOf } from './jids.js';
import { int64 } from './int64.js';
import { bodyOf, isSilent } from './message-body.js';
import type { VoteContext } from './poll-vote.js';

/** What mapping a message needs from its session: our own addresses, the poll book, a logger. */
export type MapperContext = VoteContext;

/** A Baileys message to our one shape; `undefined` for messages with nothing to report. */
export function toNormalizedMessage(msg: WAMessage, ctx: MapperContext): NormalizedMessage | undefined {
  const { key } = msg;
  const { own } = ctx;
  if (!key.remoteJid || !key.id) return undefined;
  const content = normalizeMessageContent(msg.message);
  const contentType = getContentType(content);
  if (!content || !contentType || isSilent(content, contentType)) return undefined;
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
  const body = bodyOf(msg, content, contentType, { ...ctx, sender });
  const context = contextInfoOf(content, contentType);
  const mentions = (context?.mentionedJid ?? []).filter((jid): jid is string => typeof jid === 'string');
  return {
    id: key.id,
    fromMe,
    timestamp: (int64(msg.messageTimestamp) ?? Math.floor(Date.now() / 1000)) * 1000,
    chat: { ...chat, type: chatType },
    sender,
    ...body,
    ...(mentions.length ? { mentions } : {}),
    ...(context?.isForwarded ? { forwarded: true } : {}),
  };
}

/** The content's `contextInfo`: the JIDs it mentions, whether it was forwarded. */
function contextInfoOf(content: proto.IMessage, contentType: keyof proto.IMessage): proto.IContextInfo | undefined {
  const inner = content[contentType] as { contextInfo?: proto.IContextInfo | null } | null | undefined;
  return inner?.contextInfo ?? undefined;
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
