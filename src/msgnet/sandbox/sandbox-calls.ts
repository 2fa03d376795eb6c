import { randomBytes } from 'node:crypto';
import { NotFoundError } from '../../errors.js';
import type { CallAudio, CallLink, CallOps } from '../ops/call-ops.js';
import type { SandboxNet } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';
import type { SandboxWire } from './sandbox-wire.js';

/** How long an audio call rings before it gives up, as a phone stops ringing unanswered. */
export const AUDIO_CALL_RING_SECONDS = 45;

type CallWire = Extract<SandboxWire, { t: 'call' }>;

/**
 * The simulated phone's calls: rejecting one, offering one (ended after its duration), an audio call
 * (rings; answered, the file plays, recorded in the outbox, then it hangs up), answering an offer heard,
 * call links. Calls in progress live in memory: a failover ends them, as it would drop a real call.
 */
export class SandboxCalls implements CallOps {
  /** The offered calls' hang-ups still to come, cleared when the session closes. */
  readonly #timers = new Set<NodeJS.Timeout>();
  /** Our audio calls still ringing, by call id: whom they ring, the file, and the ring's end. */
  readonly #ringing = new Map<
    string,
    { to: string; audio: Omit<CallAudio, 'data'> & { size: number }; ring: NodeJS.Timeout }
  >();
  /** Offers this phone heard and may answer, by call id: who calls. */
  readonly #offers = new Map<string, string>();

  constructor(private readonly net: SandboxNet) {}

  async reject(callId: string, from: string): Promise<void> {
    const me = this.net.me();
    await this.net.record({ to: from, type: 'call_reject', call: { callId } });
    await this.net
      .publish(from, {
        t: 'call',
        from: me,
        callId,
        status: 'rejected',
        isVideo: false,
        timestamp: Date.now(),
      })
      .catch(() => 0);
    this.net.emit({
      type: 'call',
      callId,
      from,
      status: 'rejected',
      isVideo: false,
      isGroup: false,
      timestamp: Date.now(),
    });
  }

  async offer(to: string, seconds: number): Promise<{ callId: string }> {
    const me = this.net.me();
    const jid = toJid(to);
    this.net.failIf('offerCall');
    const callId = randomBytes(16).toString('hex').toUpperCase();
    await this.net.record({ to: jid, type: 'call_offer', call: { callId, durationSeconds: seconds } });
    await this.net
      .publish(jid, {
        t: 'call',
        from: me,
        callId,
        status: 'offer',
        isVideo: false,
        timestamp: Date.now(),
      })
      .catch(() => 0);
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      void this.net
        .publish(jid, {
          t: 'call',
          from: me,
          callId,
          status: 'terminated',
          isVideo: false,
          timestamp: Date.now(),
        })
        .catch(() => 0);
    }, seconds * 1000);
    this.#timers.add(timer);
    return { callId };
  }

  async audioCall(to: string, audio: CallAudio): Promise<{ callId: string }> {
    const me = this.net.me();
    const jid = toJid(to);
    this.net.failIf('audioCall');
    const callId = randomBytes(16).toString('hex').toUpperCase();
    const file = { mimetype: audio.mimetype, seconds: audio.seconds, size: audio.data.length };
    await this.net.record({
      to: jid,
      type: 'call_offer',
      call: { callId, durationSeconds: AUDIO_CALL_RING_SECONDS },
      media: { kind: 'audio', ...file },
    });
    await this.#signal(jid, me, callId, 'offer');
    const ring = this.#after(AUDIO_CALL_RING_SECONDS, () => {
      // Unanswered: it stops ringing, and the file is never played.
      if (this.#ringing.delete(callId)) this.#hangUp(jid, me, callId);
    });
    this.#ringing.set(callId, { to: jid, audio: file, ring });
    return { callId };
  }

  /** Answers an offer this phone heard (the sandbox control of a callee picking up). */
  async answer(callId: string): Promise<{ from: string }> {
    const me = this.net.me();
    const from = this.#offers.get(callId);
    if (!from) throw new NotFoundError('Call not found');
    this.#offers.delete(callId);
    await this.#signal(from, me, callId, 'accepted');
    this.net.emit({
      type: 'call',
      callId,
      from,
      status: 'accepted',
      isVideo: false,
      isGroup: false,
      timestamp: Date.now(),
    });
    return { from };
  }

  /** A call signal heard from another phone: offers to answer, and the answer to one of our audio calls. */
  heard(wire: CallWire): void {
    if (wire.status === 'offer') this.#offers.set(wire.callId, wire.from);
    else this.#offers.delete(wire.callId);
    const ringing = this.#ringing.get(wire.callId);
    if (!ringing || ringing.to !== wire.from || wire.status === 'offer') return;
    this.#ringing.delete(wire.callId);
    clearTimeout(ringing.ring);
    this.#timers.delete(ringing.ring);
    if (wire.status !== 'accepted') return;
    const me = this.net.me();
    void this.net
      .record({
        to: wire.from,
        type: 'call_audio',
        call: { callId: wire.callId, durationSeconds: ringing.audio.seconds },
        media: { kind: 'audio', ...ringing.audio },
      })
      .catch(() => undefined);
    // The file plays to its end, then the call hangs up.
    this.#after(ringing.audio.seconds, () => this.#hangUp(wire.from, me, wire.callId));
  }

  #after(seconds: number, run: () => void): NodeJS.Timeout {
    const timer = setTimeout(() => {
      this.#timers.delete(timer);
      run();
    }, seconds * 1000);
    this.#timers.add(timer);
    return timer;
  }

  #signal(to: string, me: string, callId: string, status: CallWire['status']): Promise<unknown> {
    return this.net
      .publish(to, { t: 'call', from: me, callId, status, isVideo: false, timestamp: Date.now() })
      .catch(() => 0);
  }

  /** Ends our call on both phones: the callee hears it, and this instance reports it too. */
  #hangUp(to: string, me: string, callId: string): void {
    void this.#signal(to, me, callId, 'terminated');
    this.net.emit({
      type: 'call',
      callId,
      from: to,
      status: 'terminated',
      isVideo: false,
      isGroup: false,
      timestamp: Date.now(),
    });
  }

  async createLink(kind: 'audio' | 'video'): Promise<CallLink> {
    this.net.me();
    this.net.failIf('createCallLink');
    const token = randomBytes(16).toString('base64url');
    return { token, url: `https://call.whatsapp.com/${kind === 'video' ? 'video' : 'voice'}/${token}` };
  }

  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
    this.#ringing.clear();
    this.#offers.clear();
  }
}
