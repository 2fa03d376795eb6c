import { getContentType, normalizeMessageContent, proto } from '@whiskeysockets/baileys';
import type {
  GroupMetadata,
  GroupParticipant,
  MessageUserReceiptUpdate,
  WAMessage,
  WAMessageUpdate,
} from '@whiskeysockets/baileys';
import type { DeliveryEvent, DeliveryStatus, NormalizedMessage, Party } from '../msgnet-events.js';
import { chatTypeOf, partyOf, userJid } from './jids.js';
import { int64 } from './int64.js';
import { bodyOf, isSilent } from './message-body.js';
import type { OwnIdentity } from './own-identity.js';
import type { VoteContext } from './poll-vote.js';

/**
 * What mapping a message needs from its session: our own addresses, the poll book, a logger, and the
 * group metadata the session holds (whether a group is a community's parent).
 */
export interface MapperContext extends VoteContext {
  groupOf?: (jid: string) => Pick<GroupMetadata, 'isCommunity'> | undefined;
}

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
  // Only a group can be a community's parent; a group the session holds no metadata for is not known to be one.
  const isCommunity = chatType === 'group' ? ctx.groupOf?.(key.remoteJid)?.isCommunity : undefined;
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
    chat: { ...chat, type: chatType, ...(isCommunity !== undefined ? { isCommunity } : {}) },
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

const STATUS_NAMES: Partial<Record<number, DeliveryStatus>> = {
  [proto.WebMessageInfo.Status.ERROR]: 'failed',
  [proto.WebMessageInfo.Status.SERVER_ACK]: 'sent',
  [proto.WebMessageInfo.Status.DELIVERY_ACK]: 'delivered',
  [proto.WebMessageInfo.Status.READ]: 'read',
  [proto.WebMessageInfo.Status.PLAYED]: 'played',
};

/** A received message's receipts from the account's own devices: read (or played) there. */
const SELF_STATUS_NAMES: Partial<Record<number, DeliveryStatus>> = {
  [proto.WebMessageInfo.Status.READ]: 'read_self',
  [proto.WebMessageInfo.Status.PLAYED]: 'played_self',
};

/**
 * `messages.update` status changes, grouped by chat and status: of messages we sent (1:1 chats), and
 * of messages we received that our own phone or another of our devices read or played (Baileys gives
 * the receipts our own account sends, `read`, `played` or `read-self`, as the received message's status).
 */
export function deliveryFromUpdates(updates: WAMessageUpdate[], now: number): DeliveryEvent[] {
  const groups = new Map<string, DeliveryEvent>();
  for (const { key, update } of updates) {
    if (typeof update.status !== 'number' || !key.remoteJid || !key.id) continue;
    const status = (key.fromMe ? STATUS_NAMES : SELF_STATUS_NAMES)[update.status];
    if (!status) continue;
    const ts = int64(update.messageTimestamp);
    add(groups, key.remoteJid, key.remoteJid, status, key.id, ts ? ts * 1000 : now);
  }
  return [...groups.values()];
}

/**
 * Statuses folded into our own sends: while Baileys buffers events (a send's own upsert is buffered),
 * a receipt that arrives meanwhile is merged into the buffered message (`status`) instead of becoming a
 * `messages.update`. Each status it passed through is reported, as unbuffered updates would have been.
 */
export function deliveryFromUpserts(messages: WAMessage[], now: number): DeliveryEvent[] {
  const updates: WAMessageUpdate[] = [];
  for (const msg of messages) {
    const status = msg.status;
    if (!msg.key.fromMe || typeof status !== 'number' || status < proto.WebMessageInfo.Status.DELIVERY_ACK) continue;
    for (let s = proto.WebMessageInfo.Status.DELIVERY_ACK; s <= status; s++) {
      updates.push({ key: msg.key, update: { status: s, messageTimestamp: msg.messageTimestamp } });
    }
  }
  return deliveryFromUpdates(updates, now);
}

/**
 * `message-receipt.update` (groups and statuses): one receipt per reader. A receipt whose reader is our
 * own account came from another of our devices: a received message read (or played) there.
 */
export function deliveryFromReceipts(
  receipts: MessageUserReceiptUpdate[],
  now: number,
  own?: Pick<OwnIdentity, 'jid' | 'lid'>,
): DeliveryEvent[] {
  const groups = new Map<string, DeliveryEvent>();
  const ours = new Set([own?.jid, own?.lid].filter((jid): jid is string => !!jid));
  for (const { key, receipt } of receipts) {
    if (!key.remoteJid || !key.id || !receipt.userJid) continue;
    const self = ours.has(userJid(receipt.userJid));
    if (!key.fromMe && !self) continue;
    const played = int64(receipt.playedTimestamp);
    const read = int64(receipt.readTimestamp);
    const delivered = int64(receipt.receiptTimestamp);
    const [status, ts] = played
      ? (['played', played] as const)
      : read
        ? (['read', read] as const)
        : (['delivered', delivered] as const);
    // Our own devices report what they read or played; their delivery of our messages is no news.
    if (self && status === 'delivered') continue;
    const named: DeliveryStatus = self ? (status === 'played' ? 'played_self' : 'read_self') : status;
    add(groups, key.remoteJid, receipt.userJid, named, key.id, ts ? ts * 1000 : now);
  }
  return [...groups.values()];
}

function add(
  groups: Map<string, DeliveryEvent>,
  chatJid: string,
  recipient: string,
  status: DeliveryStatus,
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
