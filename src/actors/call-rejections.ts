import type { CallEvent } from '../msgnet/msgnet-events.js';
import type { MsgNetSession } from '../msgnet/msgnet-driver.js';
import { CALL_REJECTIONS_NAMESPACE } from '../store/namespaces.js';
import type { ActorContext } from './instance-actor.js';

/** How long WhatsApp lets a call ring (about 45 s): then the call is over and a rejection of it is dropped. */
export const RINGING_MS = 45_000;

export interface OwedRejection {
  from: string;
  /** The text to send after the rejection (`callRejectMessage` when the offer came). */
  message?: string;
  /** When the call began ringing, as far as this node can tell. */
  at: number;
}

/** Runs a store write until it is durably done (waiting while the store is out), or ownership is lost. */
type UntilStored = (write: () => Promise<void>) => Promise<void>;

/**
 * Calls the owner must reject (autoRejectCalls), as intents in owned state: recorded before the network's
 * offer is acknowledged, cleared once the rejection and its message have gone. A new owner finds what a
 * dead one left and finishes it, so a crash between the ack and the rejection loses neither; the network
 * drops a rejection of a call that already ended, and the message goes under one id (`callId`-derived).
 */
export class CallRejections {
  constructor(
    private readonly ctx: ActorContext,
    private readonly untilStored: UntilStored,
    private readonly now: () => number = Date.now,
  ) {}

  /**
   * What an offer owes, or undefined when it rang out before this node saw it. An offer the network held
   * while the instance was away carries its own time; a live one rings now (whatever the clocks say).
   */
  owed(call: CallEvent, message: string | undefined): OwedRejection | undefined {
    const now = this.now();
    const at = call.offline ? Math.min(call.timestamp, now) : now;
    if (!this.ringing({ at })) return undefined;
    return { from: call.from, ...(message ? { message } : {}), at };
  }

  async record(callId: string, owed: OwedRejection): Promise<void> {
    await this.untilStored(() =>
      this.ctx.writeOwned([{ namespace: CALL_REJECTIONS_NAMESPACE, key: callId, value: JSON.stringify(owed) }]),
    );
  }

  /** Rejects the call, sends the message, then forgets the intent; a call that rang out is only forgotten. */
  async complete(session: MsgNetSession, callId: string, owed: OwedRejection, assertOwner: () => void): Promise<void> {
    if (this.ringing(owed)) {
      assertOwner();
      await session.calls.reject(callId, owed.from);
      if (owed.message) {
        assertOwner();
        await session.messages.sendText(owed.from, owed.message, { messageId: rejectionMessageId(callId) });
      }
    }
    await this.untilStored(() =>
      this.ctx.writeOwned([{ namespace: CALL_REJECTIONS_NAMESPACE, key: callId, value: null }]),
    );
  }

  /** What a previous owner (or this one, before a failure) recorded and did not finish. */
  async pending(): Promise<Map<string, OwedRejection>> {
    const owed = new Map<string, OwedRejection>();
    for (const [callId, raw] of await this.ctx.store.ownedState.list(this.ctx.instanceId, CALL_REJECTIONS_NAMESPACE)) {
      owed.set(callId, JSON.parse(raw) as OwedRejection);
    }
    return owed;
  }

  ringing(owed: Pick<OwedRejection, 'at'>): boolean {
    return this.now() - owed.at < RINGING_MS;
  }
}

/** The id of a call's rejection message, the same on every owner: a resend is the same message. */
export function rejectionMessageId(callId: string): string {
  return `3EB0CR${callId
    .replace(/[^A-Za-z0-9]/g, '')
    .slice(0, 16)
    .toUpperCase()}`;
}
