import type { Logger } from 'pino';
import type { CallHandlers } from '../../actors/instance-actor.js';
import type {
  ExtensionEnv,
  InstanceExtension,
  InstanceExtensionFactory,
  MessageTaken,
} from '../../actors/instance-extension.js';
import type { MediaConfig } from '../../config/config.js';
import { ConflictError, NotConnectedError, NotFoundError, ValidationError } from '../../errors.js';
import type { NormalizedMessage } from '../../msgnet/msgnet-events.js';
import type { ChatbotBotRecord } from '../../store/records.js';
import { ChatScheduler } from './chat-scheduler.js';
import type { ChatbotService } from './chatbot-service.js';
import { BOT_NOT_FOUND } from './chatbot-service.js';
import type { ControlResult, SessionAction } from './chatbot-calls.js';
import { ConversationState, OPERATOR_WINDOW_MS } from './conversation-state.js';
import { FlowRunner } from './flow-runner.js';
import type { Step } from './flow-runner.js';
import { ReplyDrain } from './reply-drain.js';
import { expiry, newSession, sessionView } from './session-records.js';
import type { ChatInbox, ChatSession, SessionView } from './session-records.js';
import { TypebotRequestError } from './typebot-client.js';
import type { TypebotClient, TypebotMessage } from './typebot-client.js';
import { routeMessage } from './trigger-router.js';

export interface ChatbotExtensionDeps {
  service: ChatbotService;
  client: TypebotClient;
  /** Limits of media bubbles downloaded for sending. */
  media: MediaConfig;
  /** How long the owner trusts its copy of the bot list before routing reads it again. @default 30000 */
  botsTtlMs?: number;
}

/** An operator's marker is written again at most this often. */
const MANUAL_REFRESH_MS = 60_000;

/** Messages that can talk to a flow: text, a media caption, a clicked button or list item. */
const ANSWER_TYPES = new Set<NormalizedMessage['type']>([
  'text',
  'media',
  'buttons_response',
  'list_response',
  'interactive',
]);

const iso = (ms: number) => new Date(ms).toISOString();

/** The chatbot of every instance: one extension per actor (CHATBOT_ENABLED). */
export function chatbotExtension(deps: ChatbotExtensionDeps): InstanceExtensionFactory {
  return {
    create: (instanceId) => new ChatbotExtension(deps, instanceId),
    handlers: (self) => ChatbotExtension.handlers((scope) => self(scope) as ChatbotExtension),
  };
}

/**
 * Runs an instance's Typebot conversations on its owner node. Each chat has its own lane (messages,
 * timers, sends and controls in order); every change of a conversation (session, pending replies,
 * debounce buffer and its deadline) is written through the actor's fenced owned writes before it takes
 * effect, so a new owner reloads it on activation, re-arms the deadlines and sends what was left.
 */
export class ChatbotExtension implements InstanceExtension {
  #env: ExtensionEnv | undefined;
  #markReady!: () => void;
  readonly #ready = new Promise<void>((resolve) => (this.#markReady = resolve));
  #state!: ConversationState;
  #flow!: FlowRunner;
  #replies!: ReplyDrain;
  readonly #chats: ChatScheduler;
  /** Aborts the flow calls in flight when the actor stops. */
  readonly #stopping = new AbortController();

  constructor(
    private readonly deps: ChatbotExtensionDeps,
    private readonly instanceId: string,
  ) {
    this.#chats = new ChatScheduler({
      instanceId,
      log: () => this.#log,
      // The next deadline of a chat: its debounce, its expiry, or a send to retry.
      deadlines: (chat) => [
        this.#state.inboxes.get(chat)?.dueAt,
        this.#state.sessions.get(chat)?.expiresAt,
        this.#replies.retryAt(chat),
      ],
      onDue: (chat) => this.#tick(chat),
    });
  }

  /** The chatbot's calls, one table per node: `of` finds the calling actor's extension in its scope. */
  static handlers<S>(of: (scope: S) => ChatbotExtension): CallHandlers<S> {
    return {
      'chatbot.createBot': async (scope, { patch }) => {
        const self = of(scope);
        const bot = await self.deps.service.createBot(self.instanceId, patch);
        await self.#state.loadBots();
        return bot;
      },
      'chatbot.updateBot': async (scope, { botId, patch }) => {
        const self = of(scope);
        const bot = await self.deps.service.updateBot(self.instanceId, botId, patch);
        await self.#state.loadBots();
        await self.#endOrphans();
        return bot;
      },
      'chatbot.sync': async (scope) => {
        const self = of(scope);
        await self.#state.loadBots();
        return { bots: self.#state.bots.length, closedSessions: await self.#endOrphans() };
      },
      'chatbot.start': async (scope, { chatJid, botId, variables }) => of(scope).#startByApi(chatJid, botId, variables),
      'chatbot.control': async (scope, { chatJid, action }) => of(scope).#control(chatJid, action),
    };
  }

  get #log(): Logger {
    return this.#env!.ctx.log;
  }

  // ---- lifecycle -------------------------------------------------------------------------------

  async onActivate(env: ExtensionEnv): Promise<void> {
    this.#env = env;
    this.#state = new ConversationState(env.ctx, () => this.#chats.stopped);
    this.#flow = new FlowRunner({
      instanceId: this.instanceId,
      client: this.deps.client,
      service: this.deps.service,
      log: () => this.#log,
      variables: (session) => this.#variables(session),
      stopping: this.#stopping.signal,
    });
    this.#replies = new ReplyDrain({
      env,
      state: this.#state,
      flow: this.#flow,
      chats: this.#chats,
      media: this.deps.media,
    });
    await this.#state.load();
    this.#markReady();
    // What the previous owner left: pending replies are sent, deadlines re-armed (a past one fires now).
    for (const chat of new Set([...this.#state.sessions.keys(), ...this.#state.inboxes.keys()])) {
      this.#chats.fire(chat, () => this.#resume(chat));
    }
  }

  onConnected(): void {
    // Before the first activation finished there is nothing held back yet.
    this.#replies?.retryAll();
  }

  async onMessage(message: NormalizedMessage): Promise<void | MessageTaken> {
    await this.#ready;
    const chat = message.chat.jid;
    if (message.chat.type === 'status' || message.chat.type === 'newsletter') return;
    if (message.fromMe) {
      // Anything the operator sends but a reaction is a manual reply.
      if (!this.#chats.stopped && message.type !== 'reaction' && !this.#replies.isOwnSend(message.id)) {
        this.#chats.fire(chat, () => this.#operatorMessage(message));
      }
      return;
    }
    // Reactions, payments, event cards and the like are no answer to a flow. A contact's message is taken
    // once its chat's lane wrote what it changed (a stopped extension's lane refuses it: still owed).
    if (ANSWER_TYPES.has(message.type)) return { taken: this.#chats.lane(chat, () => this.#contactMessage(message)) };
  }

  async onStop(): Promise<void> {
    this.#chats.stop();
    this.#markReady();
    this.#stopping.abort();
    await this.#chats.idle();
  }

  // ---- deadlines -------------------------------------------------------------------------------

  async #tick(chat: string): Promise<void> {
    const now = Date.now();
    const inbox = this.#state.inboxes.get(chat);
    if (inbox && inbox.dueAt <= now) await this.#flush(chat);
    const session = this.#state.sessions.get(chat);
    if (session?.expiresAt !== undefined && session.expiresAt <= now) await this.#expire(chat);
    this.#replies.retryIfDue(chat, now);
  }

  async #resume(chat: string): Promise<void> {
    const session = this.#state.sessions.get(chat);
    if (session && !this.#state.bot(session.botId)?.enabled) {
      await this.#state.save(chat, { session: null, inbox: null });
      return;
    }
    await this.#tick(chat);
    if (this.#state.sessions.get(chat)?.status === 'opened') this.#replies.schedule(chat);
  }

  // ---- state -----------------------------------------------------------------------------------

  /** Ends the sessions whose bot is gone or disabled; returns how many. */
  async #endOrphans(): Promise<number> {
    const orphans = [...this.#state.sessions.values()]
      .filter((s) => !this.#state.bot(s.botId)?.enabled)
      .map((s) => s.chatJid);
    await Promise.all(
      orphans.map((chat) =>
        this.#chats.lane(chat, async () => {
          const s = this.#state.sessions.get(chat);
          if (s && !this.#state.bot(s.botId)?.enabled) {
            await this.#state.save(chat, { session: null, inbox: this.#state.inboxes.has(chat) ? null : undefined });
          }
        }),
      ),
    );
    return orphans.length;
  }

  // ---- messages --------------------------------------------------------------------------------

  async #contactMessage(m: NormalizedMessage): Promise<void> {
    const chat = m.chat.jid;
    // Handed over again by a new owner (the debt outlived the previous one): answered once already.
    if (this.#state.tookBefore(chat, m.id)) return;
    const now = Date.now();
    // A list's row answers the flow as a button would.
    const clicked =
      m.type === 'buttons_response' ? m.selectedButtonId : m.type === 'list_response' ? m.selectedRowId : undefined;
    let session = this.#state.sessions.get(chat);
    // A button of the flow's choice input carries its item id; a markup reply button carries its label.
    const choice = clicked ? session?.choices.find((c) => c.id === clicked) : undefined;
    const text = (m.text || choice?.label || clicked || '').trim();
    if (!text) return;
    let bot = session ? this.#state.bot(session.botId) : undefined;
    if (session && !bot?.enabled) {
      await this.#state.save(chat, { session: null, inbox: this.#state.inboxes.has(chat) ? null : undefined });
      session = undefined;
    } else if (session?.expiresAt !== undefined && session.expiresAt <= now) {
      await this.#expire(chat);
      session = undefined;
    }
    if (session && bot) {
      if (bot.keywordFinish && text.toLowerCase() === bot.keywordFinish.toLowerCase()) {
        await this.#finish(chat, bot, m.id);
        return;
      }
      if (session.status !== 'opened') {
        // Paused or held: the bot stays silent, but the contact is active.
        const held = { ...session, updatedAt: iso(now), expiresAt: expiry(bot, now) };
        await this.#state.save(chat, { session: held, took: m.id });
        return;
      }
      await this.#accept(
        chat,
        session,
        bot,
        { text, took: m.id, replyId: choice?.id, button: clicked !== undefined },
        now,
      );
      return;
    }
    if (now - this.#state.botsAt > (this.deps.botsTtlMs ?? 30_000)) await this.#state.loadBots();
    bot = routeMessage(this.#state.bots, text, m.chat.type === 'group', {
      onTimeout: (b) => this.#log.warn({ botId: b.botId }, 'a regex trigger ran out of time; treated as no match'),
    });
    if (!bot) return;
    if (bot.noStartFromMe && now - (this.#state.manual.get(chat) ?? -Infinity) < OPERATOR_WINDOW_MS) return;
    const fresh = newSession(chat, bot, m.sender.name ?? m.chat.name, now);
    await this.#accept(chat, fresh, bot, { text, took: m.id, replyId: undefined, button: clicked !== undefined }, now);
  }

  /** Buffers a fragment (the session too, when it is new) and gives the buffer to the flow when due. */
  async #accept(
    chat: string,
    session: ChatSession,
    bot: ChatbotBotRecord,
    { text, took, replyId, button }: { text: string; took: string; replyId: string | undefined; button: boolean },
    now: number,
  ): Promise<void> {
    const previous = this.#state.inboxes.get(chat);
    // A button is a deliberate answer: it goes at once, with what was typed before it.
    const immediate = bot.debounceSeconds <= 0 || button;
    const inbox: ChatInbox = {
      botId: bot.botId,
      texts: [...(previous?.texts ?? []), text],
      replyId: replyId ?? previous?.replyId,
      dueAt: immediate ? now : now + bot.debounceSeconds * 1000,
    };
    const touched = { ...session, updatedAt: iso(now), expiresAt: expiry(bot, now) };
    await this.#state.save(chat, { session: touched, inbox, took });
    if (immediate) await this.#flush(chat);
  }

  /** The operator (an API send, a phone, a helpdesk agent: anything but the bot) wrote in a chat. */
  async #operatorMessage(m: NormalizedMessage): Promise<void> {
    const chat = m.chat.jid;
    if (this.#replies.isOwnSend(m.id)) return;
    const session = this.#state.sessions.get(chat);
    if (session) {
      if (session.status === 'opened' && this.#state.bot(session.botId)?.stopBotFromMe) {
        await this.#state.save(chat, {
          session: this.#paused(session),
          inbox: this.#state.inboxes.has(chat) ? null : undefined,
        });
      }
      return;
    }
    const now = Date.now();
    if (!this.#state.bots.some((b) => b.enabled && b.noStartFromMe)) return;
    if (now - (this.#state.manual.get(chat) ?? -Infinity) < MANUAL_REFRESH_MS) return;
    // Markers past the window are forgotten along the way, a few at a time.
    const stale = [...this.#state.manual]
      .filter(([c, at]) => c !== chat && now - at >= OPERATOR_WINDOW_MS)
      .slice(0, 50)
      .map(([c]) => c);
    await this.#state.save(chat, { manual: now, staleManual: stale });
  }

  #paused(session: ChatSession): ChatSession {
    const ended = session.ended ? { ended: false, flowSessionId: undefined, choices: [] } : {};
    return { ...session, status: 'paused', pending: [], ...ended };
  }

  // ---- the flow --------------------------------------------------------------------------------

  #variables(session: ChatSession): Record<string, string> {
    const env = this.#env!;
    return {
      remoteJid: session.chatJid,
      number: session.chatJid.split('@')[0]!,
      pushName: session.pushName ?? '',
      instanceName: env.instance().name,
      ownerJid: env.instance().connection.numberJid ?? '',
    };
  }

  #advance(session: ChatSession, step: Step): ChatSession {
    return {
      ...session,
      flowSessionId: step.sessionId,
      choices: step.choices,
      pending: [...session.pending, ...step.replies],
      ended: step.ended,
    };
  }

  /** Gives the due buffer to the flow and stores the replies to send. A failed call drops the buffer. */
  async #flush(chat: string): Promise<void> {
    const inbox = this.#state.inboxes.get(chat);
    if (!inbox || inbox.dueAt > Date.now()) return;
    const session = this.#state.sessions.get(chat);
    const bot = session ? this.#state.bot(session.botId) : undefined;
    if (!session || !bot || session.status !== 'opened') {
      await this.#state.save(chat, { inbox: null });
      return;
    }
    const text = inbox.texts.join('\n');
    const input: TypebotMessage = inbox.replyId ? { type: 'text', text, metadata: { replyId: inbox.replyId } } : text;
    let step: Step;
    try {
      step = session.flowSessionId
        ? await this.#flow.continue(session, bot, input)
        : await this.#flow.start(session, bot, {}, input);
    } catch (err) {
      if (!(err instanceof TypebotRequestError)) throw err;
      // A session whose flow never started goes too: the contact's next message is routed again.
      await this.#state.save(chat, { inbox: null, ...(session.flowSessionId ? {} : { session: null }) });
      return;
    }
    await this.#state.save(chat, { inbox: null, session: this.#advance(session, step), activity: bot.botId });
    this.#replies.schedule(chat);
  }

  async #expire(chat: string): Promise<void> {
    const session = this.#state.sessions.get(chat);
    if (!session) return;
    await this.#state.save(chat, { session: null, inbox: this.#state.inboxes.has(chat) ? null : undefined });
    const bot = this.#state.bot(session.botId);
    // A paused chat is the operator's: the bot does not speak up in it.
    if (bot?.expireMessage && session.status !== 'paused') await this.#replies.notice(chat, bot.expireMessage);
  }

  async #finish(chat: string, bot: ChatbotBotRecord, took: string): Promise<void> {
    await this.#state.save(chat, { session: null, inbox: this.#state.inboxes.has(chat) ? null : undefined, took });
    if (bot.finishMessage) await this.#replies.notice(chat, bot.finishMessage);
  }

  // ---- actor calls -----------------------------------------------------------------------------

  /** Runs a control on a chat's lane, then queues the replies the session was left with. */
  async #controlLane<T>(chat: string, job: () => Promise<T>): Promise<T> {
    return this.#chats.control(chat, async () => {
      const result = await job();
      const after = this.#state.sessions.get(chat);
      if (after?.status === 'opened' && after.pending.length) this.#replies.schedule(chat);
      return result;
    });
  }

  #pickBot(botId: string | undefined): ChatbotBotRecord {
    if (botId !== undefined) {
      const bot = this.#state.bot(botId);
      if (!bot) throw new NotFoundError(BOT_NOT_FOUND);
      return bot;
    }
    const enabled = this.#state.bots.filter((b) => b.enabled);
    const bot =
      enabled.find((b) => b.triggerType === 'all') ??
      enabled.find((b) => b.fallback) ??
      (this.#state.bots.length === 1 ? this.#state.bots[0] : undefined);
    if (!bot) {
      throw new ValidationError('botId is required: the instance has several bots and none answers every message');
    }
    return bot;
  }

  async #startByApi(chat: string, botId: string | undefined, variables: Record<string, string>): Promise<SessionView> {
    const bot = this.#pickBot(botId);
    if (!bot.enabled) throw new ConflictError('Bot is disabled');
    if (this.#env!.session().state !== 'connected') throw new NotConnectedError();
    return this.#controlLane(chat, async () => {
      const now = Date.now();
      const existing = this.#state.sessions.get(chat);
      const fresh = newSession(chat, bot, existing?.pushName, now);
      const session = this.#advance(fresh, await this.#flow.start(fresh, bot, variables, undefined));
      await this.#state.save(chat, {
        session,
        inbox: this.#state.inboxes.has(chat) ? null : undefined,
        activity: bot.botId,
      });
      return sessionView(session);
    });
  }

  async #control(chat: string, action: SessionAction): Promise<ControlResult> {
    return this.#controlLane(chat, async () => {
      const session = this.#state.sessions.get(chat);
      if (!session) throw new NotFoundError('Session not found');
      const clearInbox = this.#state.inboxes.has(chat) ? null : undefined;
      if (action === 'close') {
        await this.#state.save(chat, { session: null, inbox: clearInbox });
        return { ...sessionView(session), status: 'closed' };
      }
      let next: ChatSession;
      if (action === 'pause') next = this.#paused(session);
      else {
        const bot = this.#state.bot(session.botId);
        const now = Date.now();
        next = {
          ...session,
          status: 'opened',
          updatedAt: iso(now),
          expiresAt: bot ? expiry(bot, now) : session.expiresAt,
        };
      }
      await this.#state.save(chat, { session: next, ...(action === 'pause' ? { inbox: clearInbox } : {}) });
      return sessionView(next);
    });
  }
}
