import type { Logger } from 'pino';
import type { ExtensionEnv } from '../../actors/instance-extension.js';
import type { MediaConfig } from '../../config/config.js';
import { OutcomeUnknownError, UnavailableError, isNotConnected, isOwnershipLoss } from '../../errors.js';
import { newMessageId } from '../../msgnet/message-id.js';
import { BoundedSet } from '../../util/bounded-map.js';
import { sleep } from './chat-lanes.js';
import type { ChatScheduler } from './chat-scheduler.js';
import type { ConversationState } from './conversation-state.js';
import type { FlowRunner } from './flow-runner.js';
import { sendReply } from './reply-sender.js';
import type { ChatSession } from './session-records.js';

/** A reply that found the instance disconnected is tried again after this, or as soon as it connects. */
const SEND_RETRY_MS = 3000;

export interface ReplyDrainOptions {
  env: ExtensionEnv;
  state: ConversationState;
  flow: FlowRunner;
  chats: ChatScheduler;
  /** Limits of media bubbles downloaded for sending. */
  media: MediaConfig;
}

/**
 * Sends the replies a session holds pending, one per lane job so that controls and messages interleave, and
 * the bot's notices outside the flow.
 */
export class ReplyDrain {
  readonly #retryAt = new Map<string, number>();
  /** The bot's own recent sends, to tell them from an operator's when they come back. */
  readonly #ownSends = new BoundedSet<string>(2000);
  /** Chats whose lane already holds a job that sends the next reply. */
  readonly #queued = new Set<string>();

  constructor(private readonly options: ReplyDrainOptions) {}

  get #log(): Logger {
    return this.options.env.ctx.log;
  }

  /** Whether the bot itself sent this message. */
  isOwnSend(messageId: string): boolean {
    return this.#ownSends.has(messageId);
  }

  /** When a send that found the instance disconnected is tried again, if one did. */
  retryAt(chat: string): number | undefined {
    return this.#retryAt.get(chat);
  }

  /** Queues the chat's next reply again once its retry is due. */
  retryIfDue(chat: string, now: number): void {
    const retry = this.#retryAt.get(chat);
    if (retry !== undefined && retry <= now) {
      this.#retryAt.delete(chat);
      this.schedule(chat);
    }
  }

  /** The instance is connected again: every send that found it disconnected is tried now, not at its timer. */
  retryAll(): void {
    const chats = [...this.#retryAt.keys()];
    this.#retryAt.clear();
    for (const chat of chats) this.schedule(chat);
  }

  /** Queues a job that sends the chat's next pending reply, unless one is queued already. */
  schedule(chat: string): void {
    if (this.#queued.has(chat)) return;
    this.#queued.add(chat);
    this.options.chats.fire(chat, () => {
      this.#queued.delete(chat);
      return this.#drainOne(chat);
    });
  }

  /** Sends the next pending reply (one per lane job, so controls and messages interleave), then queues the rest. */
  async #drainOne(chat: string): Promise<void> {
    const { state, env, chats } = this.options;
    const session = state.sessions.get(chat);
    if (!session || session.status !== 'opened' || chats.controlWaiting(chat)) return;
    const bot = state.bot(session.botId);
    if (!bot) return;
    const [reply, ...rest] = session.pending;
    if (!reply) {
      if (session.ended) {
        await state.save(chat, {
          session: bot.keepOpen
            ? { ...session, status: 'held', flowSessionId: undefined, choices: [], ended: false }
            : null,
        });
      }
      return;
    }
    const signal = chats.signal(chat);
    let next: ChatSession = { ...session, pending: rest };
    if (reply.kind === 'wait') {
      if (!(await sleep(reply.seconds * 1000, signal))) return;
      if (reply.dedicated && session.flowSessionId) next = await this.options.flow.afterWait(next, bot);
    } else {
      // Intent first: the id is saved before anything is sent, so that whoever sends next uses it again.
      const messageId = session.sendingId ?? newMessageId();
      if (session.sendingId === undefined) {
        await state.save(chat, { session: { ...session, sendingId: messageId } });
      }
      next = { ...next, sendingId: undefined };
      const gate = () => env.ctx.assertOwner();
      if (bot.typingDelayMs > 0) {
        gate();
        await Promise.resolve()
          .then(() => env.session().messages.sendChatPresence(chat, 'composing'))
          .catch(() => undefined);
        if (!(await sleep(bot.typingDelayMs, signal))) return;
      }
      try {
        this.#ownSends.add(await sendReply(env.session(), chat, reply, this.options.media, this.#log, gate, messageId));
      } catch (err) {
        if (isOwnershipLoss(err)) throw err;
        // Sent again under the same id, a reply whose outcome is unknown is still one message on the network.
        if (isNotConnected(err) || err instanceof UnavailableError || err instanceof OutcomeUnknownError) {
          this.#retryAt.set(chat, Date.now() + SEND_RETRY_MS);
          return;
        }
        this.#log.warn({ err, chat, kind: reply.kind }, 'a chatbot reply could not be sent; skipped');
      }
    }
    await state.save(chat, { session: next });
    this.schedule(chat);
  }

  /** Sends a notice of the bot (expiry, farewell) outside the flow; best effort. */
  async notice(chat: string, text: string): Promise<void> {
    this.options.env.ctx.assertOwner();
    try {
      this.#ownSends.add((await this.options.env.session().messages.sendText(chat, text)).messageId);
    } catch (err) {
      this.#log.warn({ err, chat }, 'chatbot notice could not be sent');
    }
  }
}
