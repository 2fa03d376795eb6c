import { entryMatches } from '../msgnet/ops/address-book.js';
import type { LastMessage } from '../msgnet/ops/chat-ops.js';
import { CHATS_NAMESPACE } from '../store/namespaces.js';
import type { MessageRecord } from '../store/records.js';
import type { ActorScope } from './actor-scope.js';
import { NO_CHAT_STATE } from './chat-calls.js';
import type { ChatCallMap, ChatState } from './chat-calls.js';
import type { ActorContext, CallHandlers } from './instance-actor.js';
import { networkOperation } from './network-operation.js';

/** How many unread messages one "mark the chat read" covers (WhatsApp reads the chat up to the newest). */
const READ_SCAN = 1000;

async function stateOf(ctx: ActorContext, chatJid: string): Promise<ChatState> {
  const raw = await ctx.store.ownedState.get(ctx.instanceId, CHATS_NAMESPACE, chatJid);
  return raw ? { ...NO_CHAT_STATE, ...(JSON.parse(raw) as Partial<ChatState>) } : { ...NO_CHAT_STATE };
}

/** Records a chat's new state under the owner's epoch, after the network applied it. */
async function saveState(ctx: ActorContext, chatJid: string, change: Partial<ChatState>): Promise<ChatState> {
  const next = { ...(await stateOf(ctx, chatJid)), ...change };
  const empty = Object.entries(next).every(([k, v]) => v === NO_CHAT_STATE[k as keyof ChatState]);
  await ctx.writeOwned([{ namespace: CHATS_NAMESPACE, key: chatJid, value: empty ? null : JSON.stringify(next) }]);
  return next;
}

/** The chat's newest message, which WhatsApp's archive and clear actions name. */
async function lastOf(ctx: ActorContext, chatJid: string): Promise<LastMessage | undefined> {
  const [m] = await ctx.store.messages.list(ctx.instanceId, { chatJid, limit: 1 });
  if (!m) return undefined;
  const participant = chatJid.endsWith('@g.us') && !m.fromMe ? { participant: m.senderJid } : {};
  return { id: m.id, fromMe: m.fromMe, timestamp: m.timestamp, ...participant };
}

/** Received messages grouped by their author (a group's read receipts name each author). */
function byAuthor(messages: MessageRecord[]): Map<string | undefined, string[]> {
  const groups = new Map<string | undefined, string[]>();
  for (const m of messages) {
    const author = m.chatJid.endsWith('@g.us') ? m.senderJid : undefined;
    groups.set(author, [...(groups.get(author) ?? []), m.id]);
  }
  return groups;
}

/** The chat operations as actor calls: the network first, then the state the chat list shows. */
export function chatHandlers(): Pick<CallHandlers<ActorScope>, keyof ChatCallMap> {
  return {
    'chats.read': async (scope, { chatJid, messageIds, sender }) => {
      const { ctx } = scope;
      const recent = await ctx.store.messages.list(ctx.instanceId, { chatJid, limit: READ_SCAN });
      const wanted = messageIds ? new Set(messageIds) : undefined;
      const toRead = recent.filter((m) =>
        wanted ? wanted.has(m.id) && !m.fromMe : !m.fromMe && m.status === 'received',
      );
      // Ids the history does not hold are still read on the network (in a private chat: no author needed).
      const unknown = messageIds?.filter((id) => !recent.some((m) => m.id === id)) ?? [];
      const session = scope.session();
      for (const [author, ids] of byAuthor(toRead)) {
        await networkOperation('Failed to mark the chat read', () => session.messages.markRead(chatJid, ids, author));
      }
      const group = chatJid.endsWith('@g.us');
      const unknownRead = unknown.length > 0 && (!group || sender !== undefined);
      if (unknownRead) {
        await networkOperation('Failed to mark the chat read', () =>
          session.messages.markRead(chatJid, unknown, group ? sender : undefined),
        );
      }
      const read = toRead.map((m) => m.id);
      if (read.length) await ctx.store.messages.setStatus(ctx.instanceId, read, 'read');
      return { messageIds: [...read, ...(unknownRead ? unknown : [])] };
    },
    'chats.archive': async (scope, { chatJid, archive }) => {
      const last = await lastOf(scope.ctx, chatJid);
      await networkOperation('Failed to archive the chat', () => scope.session().chats.archive(chatJid, archive, last));
      // WhatsApp unpins what it archives.
      return saveState(scope.ctx, chatJid, archive ? { archived: true, pinned: false } : { archived: false });
    },
    'chats.pin': async (scope, { chatJid, pin }) => {
      await networkOperation('Failed to pin the chat', () => scope.session().chats.pin(chatJid, pin));
      return saveState(scope.ctx, chatJid, { pinned: pin });
    },
    'chats.mute': async (scope, { chatJid, until }) => {
      await networkOperation('Failed to mute the chat', () => scope.session().chats.mute(chatJid, until));
      return saveState(scope.ctx, chatJid, { mutedUntil: until });
    },
    'chats.block': async (scope, { jid, block }) => {
      await networkOperation('Failed to block the contact', () => scope.session().chats.block(jid, block));
      return saveState(scope.ctx, jid, { blocked: block });
    },
    'chats.clear': async (scope, { chatJid }) => {
      const { ctx } = scope;
      const last = await lastOf(ctx, chatJid);
      await networkOperation('Failed to clear the chat', () => scope.session().chats.clear(chatJid, last));
      return { deletedMessages: await ctx.store.messages.clearChat(ctx.instanceId, chatJid) };
    },
    'chats.contacts': async (scope, { addresses }) => {
      const book = await networkOperation('Failed to read the address book', () => scope.session().chats.contacts());
      // One person asked for: only that entry crosses back to the calling node, not the whole book.
      return addresses ? book.filter((e) => addresses.some((a) => entryMatches(e, a))) : book;
    },
    'chats.check': async (scope, { numbers }) =>
      networkOperation('Failed to look the numbers up', () => scope.session().chats.check(numbers)),
    'chats.markUnread': async (scope, { chatJid }) => {
      const last = await lastOf(scope.ctx, chatJid);
      await networkOperation('Failed to mark the chat unread', () => scope.session().chats.markUnread(chatJid, last));
      return { unread: true };
    },
    'chats.deleteForMe': async (scope, { chatJid, messageId, fromMe, participant, timestamp }) => {
      const { ctx } = scope;
      const message = { id: messageId, fromMe, timestamp, ...(participant ? { participant } : {}) };
      await networkOperation('Failed to delete the message', () =>
        scope.session().chats.deleteForMe(chatJid, message, false),
      );
      await ctx.store.messages
        .delete(ctx.instanceId, messageId)
        .catch((err: unknown) => ctx.log.warn({ err, messageId }, 'could not drop a deleted message from the history'));
      return { deleted: true };
    },
    'chats.star': async (scope, { chatJid, messageId, fromMe, star }) => {
      await networkOperation('Failed to star the message', () =>
        scope.session().chats.star(chatJid, { id: messageId, fromMe }, star),
      );
      return { starred: star };
    },
  };
}
