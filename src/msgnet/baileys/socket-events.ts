import type { BaileysEventMap, GroupMetadata, WACallEvent, WACallUpdateType, WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { InstanceSettings } from '../../store/records.js';
import type { CallEvent, GroupEvent, MsgNetEvent } from '../msgnet-events.js';
import { isPnJid, userJid } from './jids.js';
import type { LabelBook } from './label-book.js';
import { deliveryFromReceipts, deliveryFromUpdates, participantParty, toNormalizedMessage } from './message-mapper.js';
import { ownIdentity } from './own-identity.js';
import type { PollBook } from './poll-book.js';
import type { BaileysSocket } from './socket-port.js';
import type { StatusAudience } from './status-audience.js';
import type { TtlCache } from './ttl-cache.js';

/** What the translation of one socket's events needs from its session. */
export interface SocketEventContext {
  settings: () => InstanceSettings;
  labels: LabelBook;
  audience: StatusAudience;
  /** Polls sent and received: received ones are remembered, and votes read with their secret. */
  polls: PollBook;
  /** `cachedGroupMetadata` entries, dropped when a group changes. */
  groupCache: TtlCache;
  /** Raw caller address per call id, for `rejectCall` (events report the phone number when known). */
  callers: Map<string, string>;
  /** Raw received messages with media, kept for `downloadMedia`. */
  mediaMessages: TtlCache;
  emit: (event: MsgNetEvent) => void;
  log: Logger;
  now: () => number;
}

const CALL_STATUS: Partial<Record<WACallUpdateType, CallEvent['status']>> = {
  offer: 'offer',
  accept: 'accepted',
  reject: 'rejected',
  terminate: 'terminated',
  timeout: 'terminated',
};

const GROUP_ACTIONS: Partial<Record<string, GroupEvent['action']>> = {
  add: 'joined',
  remove: 'left',
  promote: 'promoted',
  demote: 'demoted',
};

/** The actions a `groups.update` change carries: its subject, description, and who may send or edit. */
function groupChanges(update: Partial<GroupMetadata>): GroupEvent['action'][] {
  const actions: GroupEvent['action'][] = [];
  if (update.subject !== undefined) actions.push('name');
  if (update.desc !== undefined) actions.push('description');
  if (update.announce !== undefined || update.restrict !== undefined) actions.push('settings');
  return actions;
}

/** Who made a change: the phone-number address when Baileys knows it, else the LID. */
function authorOf(author: string | undefined, authorPn: string | undefined): { author?: string } {
  const jid = authorPn || author;
  return jid ? { author: userJid(jid) } : {};
}

type Handlers = { [K in keyof BaileysEventMap]?: (arg: BaileysEventMap[K]) => void };

/** Turns one socket's Baileys events into our normalised events; returns the function that unbinds them. */
export function bindSocketEvents(sock: BaileysSocket, ctx: SocketEventContext): () => void {
  const handlers: Handlers = {
    'messages.upsert': ({ messages }) => emitMessages(ctx, sock, messages),
    'messaging-history.set': ({ messages, contacts }) => {
      ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber]));
      // History is fetched anyway (LID mappings arrive with it); `disableHistorySync` only keeps it from users.
      if (!ctx.settings().disableHistorySync) emitMessages(ctx, sock, messages);
    },
    'contacts.upsert': (contacts) => ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber])),
    'contacts.update': (contacts) => ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber])),
    'messages.update': (updates) => deliveryFromUpdates(updates, ctx.now()).forEach(ctx.emit),
    'message-receipt.update': (receipts) => deliveryFromReceipts(receipts, ctx.now()).forEach(ctx.emit),
    call: (calls) => calls.forEach((call) => emitCall(ctx, call)),
    'group-participants.update': ({ id, participants, action, author, authorPn }) => {
      ctx.groupCache.del(id);
      const mapped = GROUP_ACTIONS[action];
      if (!mapped) return;
      ctx.emit({
        type: 'group',
        groupJid: id,
        action: mapped,
        participants: participants.map(participantParty),
        ...authorOf(author, authorPn),
        timestamp: ctx.now(),
      });
    },
    'groups.update': (updates) => {
      for (const update of updates) {
        if (!update.id) continue;
        ctx.groupCache.del(update.id);
        // A metadata refresh (groupFetchAllParticipating) lists the participants; a change never does.
        if (update.participants) continue;
        for (const action of groupChanges(update)) {
          ctx.emit({
            type: 'group',
            groupJid: update.id,
            action,
            participants: [],
            ...(update.subject !== undefined ? { groupName: update.subject } : {}),
            ...authorOf(update.author, update.authorPn),
            timestamp: ctx.now(),
          });
        }
      }
    },
    'groups.upsert': (groups) =>
      groups.forEach((g) => {
        ctx.groupCache.set(g.id, g);
        // WhatsApp's `create` notification: a new group with us in it (ours, or someone added us).
        ctx.emit({
          type: 'group',
          groupJid: g.id,
          action: 'joined',
          participants: g.participants.map(participantParty),
          groupName: g.subject,
          ...authorOf(g.author, g.authorPn ?? g.ownerPn),
          timestamp: ctx.now(),
        });
      }),
    'labels.edit': (label) => {
      if (!ctx.labels.edit(label.id, label.name, !!label.deleted)) return;
      ctx.emit({
        type: 'labels',
        chatJid: '',
        labels: [{ id: label.id, name: label.name ?? '' }],
        action: 'edit',
        timestamp: ctx.now(),
      });
    },
    'labels.association': ({ association, type }) => {
      // Message labels (`label_message`) carry a message id; only chat labels are reported.
      if ('messageId' in association) return;
      if (!ctx.labels.associate(association.chatId, association.labelId, type === 'add')) return;
      const labels = [{ id: association.labelId, name: ctx.labels.nameOf(association.labelId) }];
      ctx.emit({ type: 'labels', chatJid: association.chatId, labels, action: type, timestamp: ctx.now() });
    },
  };
  const entries = Object.entries(handlers) as [keyof BaileysEventMap, (arg: unknown) => void][];
  const guarded = entries.map(([event, handler]) => {
    // A throwing listener would break Baileys' emitter for every later listener of the event.
    const safe = (arg: unknown): void => {
      try {
        handler(arg);
      } catch (err) {
        ctx.log.error({ err, event }, 'failed to translate a network event');
      }
    };
    sock.ev.on(event, safe);
    return [event, safe] as const;
  });
  return () => guarded.forEach(([event, safe]) => sock.ev.off(event, safe));
}

function emitMessages(ctx: SocketEventContext, sock: BaileysSocket, messages: WAMessage[]): void {
  const settings = ctx.settings();
  const mapping = { own: ownIdentity(sock), polls: ctx.polls, log: ctx.log };
  for (const msg of messages) {
    const message = toNormalizedMessage(msg, mapping);
    if (!message) continue;
    if (message.chat.type === 'private') ctx.audience.add([message.chat.jid]);
    if (settings.ignoreGroupMessages && message.chat.type === 'group') continue;
    if (settings.ignoreStatus && message.chat.type === 'status') continue;
    if (message.media && !message.fromMe) ctx.mediaMessages.set(message.id, msg);
    ctx.emit({ type: 'message', message });
  }
}

function emitCall(ctx: SocketEventContext, call: WACallEvent): void {
  const status = CALL_STATUS[call.status];
  if (!status) return;
  if (status === 'offer') {
    ctx.callers.set(call.id, call.from);
  } else {
    ctx.callers.delete(call.id);
  }
  ctx.emit({
    type: 'call',
    callId: call.id,
    from: call.callerPn && isPnJid(call.callerPn) ? call.callerPn : call.from,
    status,
    isVideo: !!call.isVideo,
    isGroup: !!call.isGroup,
    timestamp: call.date instanceof Date ? call.date.getTime() : ctx.now(),
  });
}
