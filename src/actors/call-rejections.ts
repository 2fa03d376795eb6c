import type { CallEvent } from '../msgnet/msgnet-events.js';
import type { MsgNetSession } from '../msgnet/msgnet-driver.js';
import { CALL_REJECTIONS_NAMESPACE } from '../store/namespaces.js';
import type { ActorContext } from './instance-actor.js';

/** A rejection older than this is not sent by a new owner: the call has stopped ringing by then. */
const RINGING_MS = 60_000;

interface Owed {
  from: string;
  /** The text to send after the rejection (`callRejectMessage` when the offer came). */
  message?: string;
  at: number;
}

/**
 * Calls the owner must reject (autoRejectCalls), as intents in owned state: recorded before the network's
 * offer is acknowledged, cleared once the rejection and its message have gone. A new owner finds what a
 * dead one left and finishes it, so a crash between the ack and the rejection loses neither; the network
 * drops a rejection of a call that already ended, and the message goes under one id (`callId`-derived).
 */
export class CallRejections {
  constructor(private readonly ctx: ActorContext) {}

  async record(call: CallEvent, message: string | undefined): Promise<void> {
    const owed: Owed = { from: call.from, ...(message ? { message } : {}), at: Date.now() };
    await this.ctx.writeOwned([
      { namespace: CALL_REJECTIONS_NAMESPACE, key: call.callId, value: JSON.stringify(owed) },
    ]);
  }

  /** Rejects the call, sends the message, then forgets the intent. */
  async complete(session: MsgNetSession, callId: string, owed: Owed, assertOwner: () => void): Promise<void> {
    if (Date.now() - owed.at < RINGING_MS) {
      assertOwner();
      await session.calls.reject(callId, owed.from);
      if (owed.message) {
        assertOwner();
        await session.messages.sendText(owed.from, owed.message, { messageId: rejectionMessageId(callId) });
      }
    }
    await this.ctx.writeOwned([{ namespace: CALL_REJECTIONS_NAMESPACE, key: callId, value: null }]);
  }

  /** What a previous owner recorded and did not finish. */
  async pending(): Promise<Map<string, Owed>> {
    const owed = new Map<string, Owed>();
    for (const [callId, raw] of await this.ctx.store.ownedState.list(this.ctx.instanceId, CALL_REJECTIONS_NAMESPACE)) {
      owed.set(callId, JSON.parse(raw) as Owed);
    }
    return owed;
  }
}

/** The id of a call's rejection message, the same on every owner: a resend is the same message. */
export function rejectionMessageId(callId: string): string {
  return `3EB0CR${callId
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 16)
    .toUpperCase()}`;
}
