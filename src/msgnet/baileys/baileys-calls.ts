import { NotSupportedError, UnavailableError } from '../../errors.js';
import type { CallAudio, CallLink, CallOps } from '../ops/call-ops.js';
import type { ConnectionManager } from './connection-manager.js';
import { toJid } from './jids.js';
import { createCallLink } from './outgoing.js';

export const OFFER_CALL_UNSUPPORTED = 'Ring-and-drop calls are not supported by the baileys driver';
export const AUDIO_CALL_UNSUPPORTED =
  'Audio calls are not supported by the baileys driver: WhatsApp Web cannot place a voice call or carry its audio';

/** Calls through Baileys: rejecting an offer, call links; ringing has no upstream API. */
export class BaileysCalls implements CallOps {
  constructor(private readonly conn: ConnectionManager) {}

  async reject(callId: string, from: string): Promise<void> {
    // The call-creator must be the address the offer came from, which may be a LID the event did not show.
    await this.conn.socket().rejectCall(callId, this.conn.callers.get(callId) ?? toJid(from));
    this.conn.callers.delete(callId);
  }

  async offer(_to: string, _seconds: number): Promise<{ callId: string }> {
    // No upstream API in any Baileys version; hand-built call stanzas are unofficial and draw bans.
    throw new UnavailableError(OFFER_CALL_UNSUPPORTED);
  }

  async audioCall(_to: string, _audio: CallAudio): Promise<{ callId: string }> {
    // WhatsApp Web has no voice-call stack: no offer API, and no way to stream audio into a call.
    throw new NotSupportedError(AUDIO_CALL_UNSUPPORTED);
  }

  async createLink(kind: 'audio' | 'video', startTime?: number): Promise<CallLink> {
    return createCallLink(this.conn.socket(), kind, startTime);
  }
}
