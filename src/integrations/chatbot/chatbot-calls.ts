import type { ChatbotBotRecord } from '../../store/records.js';
import type { BotPatch } from './bot-schema.js';
import type { SessionStatus, SessionView } from './session-records.js';

/** `close` ends the session (status `closed` in the answer); `pause` and `resume` move it. */
export type SessionAction = 'pause' | 'resume' | 'close';

/** The chatbot's actor calls: bot writes are serialised by the instance's actor, and it runs the conversations. */
export interface ChatbotCallMap {
  /** Creates a bot (uniqueness checked in the actor's turn) and starts using it. */
  'chatbot.createBot': { payload: { patch: BotPatch }; result: ChatbotBotRecord };
  'chatbot.updateBot': { payload: { botId: string; patch: BotPatch }; result: ChatbotBotRecord };
  /** Re-reads the bots after a removal; ends the sessions of bots that are gone or disabled. */
  'chatbot.sync': { payload: Record<string, never>; result: { bots: number; closedSessions: number } };
  /** Starts a flow for a chat (closing its current session). */
  'chatbot.start': {
    payload: { chatJid: string; botId?: string; variables: Record<string, string> };
    result: SessionView;
  };
  'chatbot.control': { payload: { chatJid: string; action: SessionAction }; result: ControlResult };
}

/** The session after the action; `closed` once it has ended. */
export type ControlResult = Omit<SessionView, 'status'> & { status: SessionStatus | 'closed' };

declare module '../../actors/actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ChatbotCallMap {}
}
