import { randomBytes } from 'node:crypto';
import type { SandboxNet } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

/** The simulated phone's calls: rejecting one, offering one (ended after its duration), call links. */
export class SandboxCalls {
  /** The offered calls' hang-ups still to come, cleared when the session closes. */
  readonly #timers = new Set<NodeJS.Timeout>();

  constructor(private readonly net: SandboxNet) {}

  async rejectCall(callId: string, from: string): Promise<void> {
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

  async offerCall(to: string, seconds: number): Promise<{ callId: string }> {
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

  async createCallLink(kind: 'audio' | 'video'): Promise<{ token: string; url: string }> {
    this.net.me();
    this.net.failIf('createCallLink');
    const token = randomBytes(16).toString('base64url');
    return { token, url: `https://call.whatsapp.com/${kind === 'video' ? 'video' : 'voice'}/${token}` };
  }

  close(): void {
    for (const t of this.#timers) clearTimeout(t);
    this.#timers.clear();
  }
}
