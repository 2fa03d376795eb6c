import type { ChatbotBotRecord } from '../../store/records.js';
import type { Choice, Reply } from './flow-replies.js';

/**
 * A conversation's state, kept in the instance-owned namespace `chatbot` (written only through the
 * actor's fenced writes, so a new owner resumes it). Keys, per chat JID:
 * - `session:<jid>` the session (ChatSession);
 * - `inbox:<jid>` the contact's fragments not yet given to the flow (ChatInbox), with their deadline;
 * - `manual:<jid>` when the operator (not a bot) last wrote in a chat without a session (Unix ms);
 * - `taken:<jid>` the contact's last messages the bot took there (ChatTaken), written with what each changed;
 * and `activity:<botId>`, when the bot last ran (RFC 3339).
 */

/**
 * Session lifecycle:
 * - `opened`: the bot answers the contact (continuing the flow, or starting it on the next message);
 * - `paused`: by an operator's manual reply (stopBotFromMe) or a `pause` action; the bot stays silent
 *   until `resume`;
 * - `held`: the flow ended with keepOpen: the bot stays silent and no bot starts in the chat until the
 *   session is closed, expires or the keyword ends it (`resume` starts the flow again on the next message).
 * A session ends (its record is deleted) when the flow ends without keepOpen, on `close`, on keywordFinish,
 * on expiry, and when its bot is removed or disabled.
 */
export type SessionStatus = 'opened' | 'paused' | 'held';

export interface ChatSession {
  chatJid: string;
  botId: string;
  status: SessionStatus;
  /** Typebot's session; undefined until the flow starts, and after it ended. */
  flowSessionId: string | undefined;
  /** The choice input the flow waits on: a button reply is matched to it. */
  choices: Choice[];
  /** Replies not sent yet, in order. */
  pending: Reply[];
  /**
   * The id the first pending reply is being sent under, recorded before the send: a new owner that finds
   * it sends that reply again under the same id, which the network keeps once (never twice, never lost).
   */
  sendingId?: string;
  /** The flow ended: once `pending` is sent the session is deleted, or held with keepOpen. */
  ended: boolean;
  pushName: string | undefined;
  createdAt: string;
  /** Last activity (RFC 3339). */
  updatedAt: string;
  /** When the session expires for inactivity (Unix ms); undefined = never. */
  expiresAt: number | undefined;
}

export interface ChatInbox {
  botId: string;
  /** The contact's fragments, joined with a line break when given to the flow. */
  texts: string[];
  /** The choice item a clicked button stood for. */
  replyId: string | undefined;
  /** When the fragments go to the flow (Unix ms): the debounce deadline. */
  dueAt: number;
}

/**
 * The ids of a chat's last messages the bot took: a message the next owner hands over again (its debt
 * not ended before the instance was lost) is recognised and not answered twice.
 */
export interface ChatTaken {
  ids: string[];
  /** When the last one was taken (Unix ms): markers past OPERATOR_WINDOW_MS are deleted. */
  at: number;
}

export const sessionKey = (chatJid: string) => `session:${chatJid}`;
export const inboxKey = (chatJid: string) => `inbox:${chatJid}`;
export const manualKey = (chatJid: string) => `manual:${chatJid}`;
export const takenKey = (chatJid: string) => `taken:${chatJid}`;
export const activityKey = (botId: string) => `activity:${botId}`;

/** The chatbot namespace's entries, sorted by kind. */
export function readChatState(entries: Map<string, string>) {
  const sessions = new Map<string, ChatSession>();
  const inboxes = new Map<string, ChatInbox>();
  const manual = new Map<string, number>();
  const taken = new Map<string, ChatTaken>();
  const activity = new Map<string, string>();
  for (const [key, value] of entries) {
    const at = key.indexOf(':');
    const kind = key.slice(0, at);
    const id = key.slice(at + 1);
    if (kind === 'session') sessions.set(id, JSON.parse(value) as ChatSession);
    else if (kind === 'inbox') inboxes.set(id, JSON.parse(value) as ChatInbox);
    else if (kind === 'manual') manual.set(id, Number(value));
    else if (kind === 'taken') taken.set(id, JSON.parse(value) as ChatTaken);
    else if (kind === 'activity') activity.set(id, value);
  }
  return { sessions, inboxes, manual, taken, activity };
}

/** A session as the API shows it. */
export function sessionView(s: ChatSession) {
  return {
    number: s.chatJid.split('@')[0]!,
    jid: s.chatJid,
    botId: s.botId,
    status: s.status,
    pushName: s.pushName ?? null,
    createdAt: s.createdAt,
    lastActivityAt: s.updatedAt,
    expiresAt: s.expiresAt === undefined ? null : new Date(s.expiresAt).toISOString(),
  };
}

export type SessionView = ReturnType<typeof sessionView>;

/** When a session of `bot` expires if the contact says nothing more (undefined: never). */
export const expiry = (bot: ChatbotBotRecord, now: number) =>
  bot.expireMinutes > 0 ? now + bot.expireMinutes * 60_000 : undefined;

/** A session that has not talked to the flow yet. */
export function newSession(
  chatJid: string,
  bot: ChatbotBotRecord,
  pushName: string | undefined,
  now: number,
): ChatSession {
  const at = new Date(now).toISOString();
  return {
    chatJid,
    botId: bot.botId,
    status: 'opened',
    flowSessionId: undefined,
    choices: [],
    pending: [],
    ended: false,
    pushName,
    createdAt: at,
    updatedAt: at,
    expiresAt: expiry(bot, now),
  };
}
