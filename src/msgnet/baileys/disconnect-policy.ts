import { DisconnectReason } from '@whiskeysockets/baileys';
import type { ConnectionState } from '../../store/records.js';
import { TEMP_BAN_REASON } from '../msgnet-events.js';
import { backoffDelay as exponential } from '../../util/backoff.js';

/** What to do after a socket closed, decided from Baileys' status code alone. */
export type DisconnectAction =
  /** Build a new socket with the same auth at once (515 after a new pairing). */
  | { kind: 'restart' }
  /** Transient: build a new socket after a backoff delay; `cause` when the network could not be reached. */
  | { kind: 'backoff'; reason: string; cause?: string }
  /** Stay closed: a new socket would fail the same way or fight another process. */
  | { kind: 'stop'; state: ConnectionState; reason: string; clearAuth: boolean }
  /**
   * Another connection logged in with these credentials (440): reconnect only if this node still owns the
   * instance (then the other one was a stale owner's), else stay quiet: its login would replace the owner's.
   */
  | { kind: 'replaced'; reason: string };

/** Reads `(lastDisconnect.error as Boom).output.statusCode` without depending on `@hapi/boom`. */
export function statusCodeOf(error: unknown): number | undefined {
  const output = (error as { output?: { statusCode?: unknown } } | undefined)?.output;
  return typeof output?.statusCode === 'number' ? output.statusCode : undefined;
}

/**
 * The socket-level cause when the WebSocket itself failed (Baileys wraps it as `WebSocket Error (<message>)`
 * with the original error as `data`): DNS failures, refused connections, a proxy that is down.
 */
export function unreachableCause(error: unknown): string | undefined {
  const message = error instanceof Error ? error.message : '';
  const match = /^WebSocket Error \((.*)\)$/s.exec(message);
  if (!match) return undefined;
  const inner = (error as { data?: { message?: unknown } }).data?.message;
  return typeof inner === 'string' && inner !== '' ? inner : match[1] || 'connection failed';
}

/** WhatsApp's answer to too many logins (Baileys has no name for it). */
const RATE_OVERLIMIT = 429;

/**
 * WhatsApp's login failure for an account banned for a while (the `failure` stanza's reason, which Baileys
 * passes on as the status code without a name; whatsmeow calls it `ConnectFailureTempBanned`).
 */
const TEMP_BANNED = 402;

export function decideDisconnect(error: unknown): DisconnectAction {
  const code = statusCodeOf(error);
  const message = error instanceof Error ? error.message : '';
  const cause = unreachableCause(error);
  if (cause !== undefined) return { kind: 'backoff', reason: 'network unreachable', cause };
  switch (code) {
    case DisconnectReason.restartRequired:
      return { kind: 'restart' };
    case DisconnectReason.connectionReplaced:
      // Another process holds the same creds: only the owner by the store's epoch may take the link back.
      return { kind: 'replaced', reason: 'replaced by another session' };
    case DisconnectReason.loggedOut:
      return { kind: 'stop', state: 'loggedout', reason: 'logged out', clearAuth: true };
    case DisconnectReason.multideviceMismatch:
      return { kind: 'stop', state: 'loggedout', reason: 'multi-device mismatch', clearAuth: true };
    case DisconnectReason.forbidden:
      return { kind: 'stop', state: 'loggedout', reason: 'forbidden', clearAuth: false };
    case DisconnectReason.timedOut:
      // 408 is also "QR refs attempts ended": nobody scanned, so a new socket would only print more QRs.
      if (/QR refs attempts ended/i.test(message)) {
        return { kind: 'stop', state: 'disconnected', reason: 'qr code expired', clearAuth: false };
      }
      return { kind: 'backoff', reason: 'connection lost' };
    case DisconnectReason.connectionClosed:
      return { kind: 'backoff', reason: 'connection closed' };
    case DisconnectReason.badSession:
      return { kind: 'backoff', reason: 'bad session' };
    case DisconnectReason.unavailableService:
      return { kind: 'backoff', reason: 'service unavailable' };
    case RATE_OVERLIMIT:
      return { kind: 'backoff', reason: 'rate-overlimit' };
    case TEMP_BANNED:
      // Retried with the same backoff as before it had a name; the ban lifts by itself.
      return { kind: 'backoff', reason: TEMP_BAN_REASON };
    default:
      return { kind: 'backoff', reason: code === undefined ? 'connection error' : `connection failure (${code})` };
  }
}

export interface BackoffOptions {
  /** First delay. @default 1000 */
  baseMs: number;
  /** Largest delay. @default 60000 */
  maxMs: number;
}

export const DEFAULT_BACKOFF: BackoffOptions = { baseMs: 1_000, maxMs: 60_000 };

/** The delay before reconnecting, in whole milliseconds, with "equal jitter" so many sessions do not retry in step. */
export function backoffDelay(attempt: number, options: BackoffOptions, random: () => number = Math.random): number {
  return Math.round(exponential(attempt, { ...options, jitter: 'equal' }, random));
}
