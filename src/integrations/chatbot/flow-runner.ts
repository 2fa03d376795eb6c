import type { Logger } from 'pino';
import { NotOwnerError } from '../../errors.js';
import type { ChatbotBotRecord } from '../../store/records.js';
import type { ChatbotService } from './chatbot-service.js';
import { flowStep } from './flow-replies.js';
import type { FlowStep } from './flow-replies.js';
import type { ChatSession } from './session-records.js';
import { TypebotRequestError, TypebotSessionGoneError } from './typebot-client.js';
import type { TypebotClient, TypebotMessage } from './typebot-client.js';

export type Step = FlowStep & { sessionId: string };

export interface FlowRunnerOptions {
  instanceId: string;
  client: TypebotClient;
  service: ChatbotService;
  log: () => Logger;
  /** The prefilled variables of a chat's flow. */
  variables: (session: ChatSession) => Record<string, string>;
  /** Aborted when the actor stops: calls in flight end, and their failure is not the flow's. */
  stopping: AbortSignal;
}

/**
 * The calls to a bot's flow for one instance, and the integration link's health: a failed call marks the
 * link `error` with `last_error`, the next success marks it `active` again (one store write per change).
 */
export class FlowRunner {
  #healthy: boolean | undefined;

  constructor(private readonly options: FlowRunnerOptions) {}

  /** startChat; when the flow opens on an input with nothing to say, the contact's text answers it. */
  async start(
    session: ChatSession,
    bot: ChatbotBotRecord,
    extra: Record<string, string>,
    input: TypebotMessage | undefined,
  ): Promise<Step> {
    return this.#tracked(async () => {
      const signal = this.options.stopping;
      const started = await this.options.client.startChat(
        bot.url,
        { prefilledVariables: { ...this.options.variables(session), ...extra } },
        signal,
      );
      if (input !== undefined && started.messages.length === 0 && started.input) {
        return {
          ...flowStep(await this.options.client.continueChat(bot.url, started.sessionId, input, signal)),
          sessionId: started.sessionId,
        };
      }
      return { ...flowStep(started), sessionId: started.sessionId };
    });
  }

  /** continueChat; a session Typebot no longer has (404) starts the flow again, without the contact's text. */
  async continue(session: ChatSession, bot: ChatbotBotRecord, input: TypebotMessage): Promise<Step> {
    const sessionId = session.flowSessionId!;
    try {
      return await this.#tracked(async () => ({
        ...flowStep(await this.options.client.continueChat(bot.url, sessionId, input, this.options.stopping)),
        sessionId,
      }));
    } catch (err) {
      if (!(err instanceof TypebotSessionGoneError)) throw err;
      this.options
        .log()
        .info({ chat: session.chatJid, botId: bot.botId }, 'the flow forgot the session; starting it again');
      return this.start(session, bot, {}, undefined);
    }
  }

  /** After a `wait` that expects a dedicated reply: the rest of the flow, or `ended` when Typebot has none. */
  async afterWait(session: ChatSession, bot: ChatbotBotRecord): Promise<ChatSession> {
    try {
      const step = await this.#tracked(async () =>
        flowStep(
          await this.options.client.continueChat(bot.url, session.flowSessionId!, undefined, this.options.stopping),
        ),
      );
      return { ...session, pending: [...step.replies, ...session.pending], choices: step.choices, ended: step.ended };
    } catch (err) {
      if (err instanceof TypebotSessionGoneError) return { ...session, ended: true };
      if (err instanceof TypebotRequestError) return session;
      throw err;
    }
  }

  /** Runs a call and records the link's health; a 404 on continue is the flow's answer, not a failure. */
  async #tracked<T>(call: () => Promise<T>): Promise<T> {
    let result: T;
    try {
      result = await call();
    } catch (err) {
      if (err instanceof TypebotRequestError && !(err instanceof TypebotSessionGoneError)) await this.#health(err);
      throw err;
    }
    await this.#health(undefined);
    return result;
  }

  async #health(err: TypebotRequestError | undefined): Promise<void> {
    if (this.options.stopping.aborted) throw new NotOwnerError(this.options.instanceId);
    if (err) this.options.log().warn({ err: err.message }, 'chatbot flow call failed');
    if (err === undefined && this.#healthy === true) return;
    this.#healthy = err === undefined;
    await this.options.service
      .recordFlowHealth(this.options.instanceId, err?.message)
      .catch((e: unknown) => this.options.log().warn({ err: e }, 'could not record the chatbot link status'));
  }
}
