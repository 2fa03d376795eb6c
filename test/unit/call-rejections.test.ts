import { expect } from 'chai';
import { CallRejections, RINGING_MS, rejectionMessageId } from '../../src/actors/call-rejections.js';
import type { ActorContext } from '../../src/actors/instance-actor.js';
import type { MsgNetSession } from '../../src/msgnet/msgnet-driver.js';
import type { CallEvent } from '../../src/msgnet/msgnet-events.js';
import type { OwnedStateOp } from '../../src/store/records.js';

/** The intents a CallRejections writes, and what its session sent, on a clock the test moves. */
function harness() {
  let now = 1_000_000;
  const writes: OwnedStateOp[] = [];
  const sent: string[] = [];
  const ctx = { writeOwned: async (ops: OwnedStateOp[]) => void writes.push(...ops) } as unknown as ActorContext;
  const session = {
    calls: { reject: async (callId: string) => void sent.push(`reject ${callId}`) },
    messages: {
      sendText: async (_to: string, text: string, o: { messageId: string }) => void sent.push(`${text} ${o.messageId}`),
    },
  } as unknown as MsgNetSession;
  const rejections = new CallRejections(
    ctx,
    (write) => write(),
    () => now,
  );
  return { rejections, writes, sent, session, advance: (ms: number) => (now += ms), now: () => now };
}

const offer = (timestamp: number, offline?: boolean): CallEvent => ({
  type: 'call',
  callId: 'C1',
  from: '5511999990001',
  status: 'offer',
  isVideo: false,
  isGroup: false,
  timestamp,
  ...(offline ? { offline } : {}),
});

describe('CallRejections: what an offer owes, and how long', () => {
  it('a live offer rings now whatever its time says (clocks differ); one the network held rings from its own time', () => {
    const { rejections, now } = harness();
    expect(rejections.owed(offer(now() - 10 * RINGING_MS), 'busy')).to.deep.equal({
      from: '5511999990001',
      message: 'busy',
      at: now(),
    });
    expect(rejections.owed(offer(now() - 5_000, true), undefined)).to.deep.equal({
      from: '5511999990001',
      at: now() - 5_000,
    });
    // Held until it rang out (the instance was away): a missed call, nothing to reject.
    expect(rejections.owed(offer(now() - RINGING_MS, true), 'busy')).to.equal(undefined);
    // A held offer stamped in this node's future counts from now.
    expect(rejections.owed(offer(now() + 60_000, true), undefined)?.at).to.equal(now());
  });

  it('completes a ringing call: rejection, message under the call-derived id, then the intent is cleared', async () => {
    const { rejections, writes, sent, session, now } = harness();
    const owed = rejections.owed(offer(now()), 'busy')!;
    await rejections.record('C1', owed);
    await rejections.complete(session, 'C1', owed, () => undefined);
    expect(sent).to.deep.equal(['reject C1', `busy ${rejectionMessageId('C1')}`]);
    expect(writes.map((w) => w.value === null)).to.deep.equal([false, true]);
  });

  it('a call that rang out while its rejection was owed (the owner was away) is only forgotten', async () => {
    const { rejections, writes, sent, session, now, advance } = harness();
    const owed = rejections.owed(offer(now()), 'busy')!;
    await rejections.record('C1', owed);
    advance(RINGING_MS);
    await rejections.complete(session, 'C1', owed, () => undefined);
    expect(sent).to.deep.equal([]);
    expect(writes.at(-1)).to.include({ key: 'C1', value: null });
  });
});
