import { deflateSync } from 'node:zlib';
import { proto } from '@whiskeysockets/baileys';
import type { Account } from '../server/directory.js';
import type { SimCore } from '../server/sim-core.js';
import type { AddressBook } from './address-book.js';

/** How many of a chat's latest messages the recent history carries. */
const MESSAGES_PER_CHAT = 20;

/**
 * The history a phone gives a new companion, as protocol messages with the payload inline
 * (`initialHistBootstrapInlinePayload`, which companions announce they accept): the initial bootstrap
 * (every contact and group as a conversation, push names, PN↔LID mappings), then, when the companion
 * asked for its history (`requireFullSync`), the recent messages of each chat (RECENT, progress 100).
 */
export function historySyncMessages(
  account: Account,
  core: SimCore,
  book: AddressBook,
  sent: { to: string; message: proto.IMessage; t: number }[],
  withMessages: boolean,
): proto.IMessage[] {
  const others = core.directory.accounts().filter((a) => a !== account);
  const contacts = [...others.map((a) => ({ jid: a.pnJid, lid: a.lidJid, name: a.pushName })), ...book.contacts];
  const conversations: proto.IConversation[] = [
    ...contacts.map((c) => ({ id: c.jid, name: c.name, lidJid: c.lid, pnJid: c.jid })),
    ...core.groups.of(account).map((g) => ({ id: g.jid, name: g.subject })),
    ...book.groups.map((g) => ({ id: g.jid, name: g.subject })),
  ];
  const bootstrap: proto.IHistorySync = {
    syncType: proto.HistorySync.HistorySyncType.INITIAL_BOOTSTRAP,
    conversations,
    pushnames: contacts.map((c) => ({ id: c.jid, pushname: c.name })),
    phoneNumberToLidMappings: contacts.map((c) => ({ pnJid: c.jid, lidJid: c.lid })),
    progress: 100,
  };
  const syncs: proto.IHistorySync[] = [bootstrap];
  if (withMessages) {
    const byChat = new Map<string, proto.IHistorySyncMsg[]>();
    const push = (chat: string, msg: proto.IWebMessageInfo) => {
      const list = byChat.get(chat) ?? [];
      list.push({ message: msg });
      byChat.set(chat, list.slice(-MESSAGES_PER_CHAT));
    };
    for (const [i, s] of sent.entries()) {
      push(s.to, {
        key: { remoteJid: s.to, fromMe: true, id: `H${s.t.toString(36)}${i}` },
        message: s.message,
        messageTimestamp: Math.floor(s.t / 1000),
      });
    }
    for (const m of book.messages) {
      push(m.chat, {
        key: {
          remoteJid: m.chat,
          fromMe: m.fromMe,
          id: m.id,
          ...(m.participant ? { participant: m.participant } : {}),
        },
        message: { conversation: m.text },
        messageTimestamp: m.t,
      });
    }
    syncs.push({
      syncType: proto.HistorySync.HistorySyncType.RECENT,
      conversations: [...byChat].map(([id, messages]) => ({ id, messages })),
      progress: 100,
    });
  }
  return syncs.map((sync, chunkOrder) => ({
    protocolMessage: {
      type: proto.Message.ProtocolMessage.Type.HISTORY_SYNC_NOTIFICATION,
      historySyncNotification: {
        syncType: sync.syncType,
        chunkOrder,
        progress: 100,
        initialHistBootstrapInlinePayload: deflateSync(proto.HistorySync.encode(sync).finish()),
      },
    },
  }));
}
