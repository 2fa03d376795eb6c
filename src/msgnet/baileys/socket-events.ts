import type { BaileysEventMap, GroupMetadata, WACallEvent, WACallUpdateType, WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { InstanceSettings } from '../../store/records.js';
import type { CallEvent, GroupEvent, MsgNetEvent } from '../msgnet-events.js';
import { int64 } from './int64.js';
import { isPnJid, userJid } from './jids.js';
import type { ContactBook } from './contact-book.js';
import type { LabelBook } from './label-book.js';
import type { NetworkAcks } from './network-acks.js';
import {
  deliveryFromReceipts,
  deliveryFromUpdates,
  deliveryFromUpserts,
  participantParty,
  toNormalizedMessage,
} from './message-mapper.js';
import { ownIdentity } from './own-identity.js';
import type { PollBook } from './poll-book.js';
import type { SentMessages } from './sent-messages.js';
import type { BaileysSocket } from './socket-port.js';
import type { StatusAudience } from './status-audience.js';
import type { TtlCache } from './ttl-cache.js';

/** What the translation of one socket's events needs from its session. */
export interface SocketEventContext {
  settings: () => InstanceSettings;
  labels: LabelBook;
  audience: StatusAudience;
  /** The address book: history sync contacts, contact actions, push names. */
  contacts: ContactBook;
  /** Days of history a new link asked for (`?history=`): older history is dropped; undefined: the setting decides. */
  historyDays: () => number | undefined;
  /** Polls sent and received: received ones are remembered, and votes read with their secret. */
  polls: PollBook;
  /** The contents of our own sends (their echo), kept for retry receipts. */
  sent: SentMessages;
  /** `cachedGroupMetadata` entries, dropped when a group changes. */
  groupCache: TtlCache;
  /** Raw caller address per call id, for `rejectCall` (events report the phone number when known). */
  callers: Map<string, string>;
  /** Raw received messages with media, kept for `downloadMedia`. */
  mediaMessages: TtlCache;
  /** The receipts and call acks the owner sends once it has stored their events. */
  acks: NetworkAcks;
  emit: (event: MsgNetEvent) => void;
  log: Logger;
  now: () => number;
}

/**
 * Baileys' call updates in the hosted product's words. `timeout` (nobody answered) ends the call, its
 * cause kept as the reason; `preaccept` and `transport` are signalling, and `ringing` is Baileys' name
 * for a call stanza it does not know: none of them is reported.
 */
const CALL_STATUS: Partial<Record<WACallUpdateType, CallEvent['status']>> = {
  offer: 'offer',
  accept: 'accepted',
  reject: 'rejected',
  terminate: 'terminated',
  timeout: 'terminated',
  relaylatency: 'latency',
};

/** The statuses after which a call is over (its caller's address is no longer needed). */
const CALL_ENDS = new Set<CallEvent['status']>(['accepted', 'rejected', 'terminated']);

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
  const settings = [update.announce, update.restrict, update.memberAddMode, update.joinApprovalMode];
  if (settings.some((s) => s !== undefined)) actions.push('settings');
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
    'messages.upsert': ({ messages, type }) => {
      // Our own send's echo ('append'): its content is kept before anyone can ask for it again.
      if (type === 'append') for (const m of messages) ctx.sent.remember(m);
      emitMessages(ctx, sock, messages, true);
      deliveryFromUpserts(messages, ctx.now()).forEach(ctx.emit);
    },
    'messaging-history.set': ({ messages, contacts }) => {
      ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber]));
      ctx.contacts.add(contacts);
      // History is fetched anyway (LID mappings arrive with it); `disableHistorySync` only keeps it from users,
      // unless the link asked for some days of it, which it then gets and nothing older.
      const days = ctx.historyDays();
      if (days !== undefined) emitMessages(ctx, sock, withinDays(messages, days, ctx.now()), false);
      else if (!ctx.settings().disableHistorySync) emitMessages(ctx, sock, messages, false);
    },
    'contacts.upsert': (contacts) => {
      ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber]));
      ctx.contacts.add(contacts);
    },
    'contacts.update': (contacts) => {
      ctx.audience.add(contacts.flatMap((c) => [c.id, c.phoneNumber]));
      ctx.contacts.add(contacts);
    },
    'messages.update': (updates) => deliveryFromUpdates(updates, ctx.now()).forEach(ctx.emit),
    'message-receipt.update': (receipts) =>
      deliveryFromReceipts(receipts, ctx.now(), ownIdentity(sock)).forEach(ctx.emit),
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

const DAY_MS = 86_400_000;

/** The history messages of the last `days` days (none for 0); one without a time is kept out. */
function withinDays(messages: WAMessage[], days: number, now: number): WAMessage[] {
  const since = now - days * DAY_MS;
  return messages.filter((m) => {
    const seconds = int64(m.messageTimestamp);
    return days > 0 && seconds !== undefined && seconds * 1000 >= since;
  });
}

/**
 * Each message becomes an event; `received` ones (not history) carry the acknowledgement that sends their
 * receipt, and one that is not reported (nothing to report, or ignored by the settings) is acknowledged
 * at once: nothing is lost by receipting what the owner would drop anyway.
 */
function emitMessages(ctx: SocketEventContext, sock: BaileysSocket, messages: WAMessage[], received: boolean): void {
  const settings = ctx.settings();
  const mapping = {
    own: ownIdentity(sock),
    polls: ctx.polls,
    log: ctx.log,
    groupOf: (jid: string) => ctx.groupCache.get<GroupMetadata>(jid),
  };
  for (const msg of messages) {
    const acknowledge = received && msg.key.id ? ctx.acks.acknowledgeMessage(msg, msg.key.id) : undefined;
    const message = toNormalizedMessage(msg, mapping);
    const ignored =
      !message ||
      (settings.ignoreGroupMessages && message.chat.type === 'group') ||
      (settings.ignoreStatus && message.chat.type === 'status');
    if (message?.chat.type === 'private') ctx.audience.add([message.chat.jid]);
    if (ignored) {
      acknowledge?.();
      continue;
    }
    if (message.media && !message.fromMe) ctx.mediaMessages.set(message.id, msg);
    ctx.emit({ type: 'message', message, ...(acknowledge ? { acknowledge } : {}) });
  }
}

function emitCall(ctx: SocketEventContext, call: WACallEvent): void {
  const status = CALL_STATUS[call.status];
  if (!status) return;
  if (status === 'offer') {
    ctx.callers.set(call.id, call.from);
  } else if (CALL_ENDS.has(status)) {
    ctx.callers.delete(call.id);
  }
  ctx.emit({
    type: 'call',
    callId: call.id,
    from: call.callerPn && isPnJid(call.callerPn) ? call.callerPn : call.from,
    status,
    ...(call.status === 'timeout' ? { reason: 'timeout' } : {}),
    isVideo: !!call.isVideo,
    isGroup: !!call.isGroup,
    timestamp: call.date instanceof Date ? call.date.getTime() : ctx.now(),
    ...(call.offline ? { offline: true } : {}),
    // Only an offer's ack waits for the owner (it records the rejection it owes first).
    ...(status === 'offer' ? { acknowledge: ctx.acks.acknowledge(call.id, true) } : {}),
  });
}
