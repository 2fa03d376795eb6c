import type { ActorContext } from '../../actors/instance-actor.js';
import { untilStored } from '../../actors/until-stored.js';
import { CHATBOT_NAMESPACE } from '../../store/namespaces.js';
import type { ChatbotBotRecord, OwnedStateOp } from '../../store/records.js';
import { activityKey, inboxKey, manualKey, readChatState, sessionKey, takenKey } from './session-records.js';
import type { ChatInbox, ChatSession, ChatTaken } from './session-records.js';

/** A chat where the operator wrote in the last 24 hours is theirs: bots with noStartFromMe do not start there. */
export const OPERATOR_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Message ids kept per chat: a hand-over follows the instance's loss within seconds, a few messages at most. */
const TAKEN_KEPT = 8;

/** One change of a chat (`null` deletes), written at once. */
export interface ChatChange {
  session?: ChatSession | null;
  inbox?: ChatInbox | null;
  /** When the operator wrote (noStartFromMe). */
  manual?: number;
  /** Other chats' operator markers that are past the window. */
  staleManual?: string[];
  /** The bot that just ran (its `last_activity_at`). */
  activity?: string;
  /** The contact's message this change comes from (ChatTaken). */
  took?: string;
}

/**
 * The owner's copy of an instance's conversations and bots. Every change is one fenced owned write
 * (namespace `chatbot`) and reaches the copy only once the store accepted it, so memory never runs ahead
 * of what a new owner would load.
 */
export class ConversationState {
  readonly sessions = new Map<string, ChatSession>();
  readonly inboxes = new Map<string, ChatInbox>();
  readonly manual = new Map<string, number>();
  readonly taken = new Map<string, ChatTaken>();
  bots: ChatbotBotRecord[] = [];
  botsAt = 0;

  constructor(
    private readonly ctx: ActorContext,
    /** The extension stopped: a write waiting for the store gives up. */
    private readonly stopped: () => boolean = () => false,
  ) {}

  /** Loads the bots and what the previous owner left; operator markers past the window are deleted. */
  async load(): Promise<void> {
    await this.loadBots();
    const state = readChatState(await this.ctx.store.ownedState.list(this.ctx.instanceId, CHATBOT_NAMESPACE));
    for (const [chat, s] of state.sessions) this.sessions.set(chat, s);
    for (const [chat, i] of state.inboxes) this.inboxes.set(chat, i);
    const stale: OwnedStateOp[] = [];
    for (const [chat, at] of state.manual) {
      if (Date.now() - at < OPERATOR_WINDOW_MS) this.manual.set(chat, at);
      else stale.push({ namespace: CHATBOT_NAMESPACE, key: manualKey(chat), value: null });
    }
    for (const [chat, taken] of state.taken) {
      if (Date.now() - taken.at < OPERATOR_WINDOW_MS) this.taken.set(chat, taken);
      else stale.push({ namespace: CHATBOT_NAMESPACE, key: takenKey(chat), value: null });
    }
    if (stale.length) await this.ctx.writeOwned(stale);
  }

  async loadBots(): Promise<void> {
    this.bots = await this.ctx.store.chatbots.listBots(this.ctx.instanceId);
    this.botsAt = Date.now();
  }

  /** Whether the bot took this message of the chat already (under this owner or an earlier one). */
  tookBefore(chat: string, messageId: string): boolean {
    return this.taken.get(chat)?.ids.includes(messageId) ?? false;
  }

  bot(botId: string): ChatbotBotRecord | undefined {
    return this.bots.find((b) => b.botId === botId);
  }

  async save(chat: string, change: ChatChange): Promise<void> {
    const ops: OwnedStateOp[] = [];
    const put = (key: string, value: unknown) =>
      ops.push({
        namespace: CHATBOT_NAMESPACE,
        key,
        value: value === null ? null : typeof value === 'string' ? value : JSON.stringify(value),
      });
    if (change.session !== undefined) put(sessionKey(chat), change.session);
    if (change.inbox !== undefined) put(inboxKey(chat), change.inbox);
    if (change.manual !== undefined) put(manualKey(chat), String(change.manual));
    if (change.activity !== undefined) put(activityKey(change.activity), new Date().toISOString());
    for (const other of change.staleManual ?? []) put(manualKey(other), null);
    const taken = change.took === undefined ? undefined : this.#took(chat, change.took);
    if (taken) put(takenKey(chat), taken);
    // A store that is out holds the chat's lane (a contact's message already acknowledged to the network
    // would otherwise be dropped with the failed step); the write is one fenced batch, so a retry is safe.
    await untilStored(
      { assertOwner: () => this.ctx.assertOwner(), log: this.ctx.log, abandoned: this.stopped },
      () => this.ctx.writeOwned(ops),
      'chatbot steps',
    );
    if (change.session === null) this.sessions.delete(chat);
    else if (change.session) this.sessions.set(chat, change.session);
    if (change.inbox === null) this.inboxes.delete(chat);
    else if (change.inbox) this.inboxes.set(chat, change.inbox);
    if (change.manual !== undefined) this.manual.set(chat, change.manual);
    for (const other of change.staleManual ?? []) this.manual.delete(other);
    if (taken) this.taken.set(chat, taken);
  }

  #took(chat: string, messageId: string): ChatTaken {
    const ids = (this.taken.get(chat)?.ids ?? []).slice(1 - TAKEN_KEPT);
    return { ids: [...ids, messageId], at: Date.now() };
  }
}
