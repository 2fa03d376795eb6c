import type { Logger } from 'pino';
import { channels } from '../redis/keys.js';
import type { Transport } from '../transport/transport.js';

/** What changed: an instance's token, or an account (its token rotated, disabled, enabled or deleted). */
export type CredentialChange = { instanceId: string } | { accountId: string };

/**
 * Credential changes told to every node at once (Redis pub/sub in cluster mode): WebSockets opened with a
 * revoked token close within a second, and reconcilers stop or start a disabled or enabled account's
 * instances without waiting for their period. Fire-and-forget: every listener also re-checks on its own
 * period, so a lost message delays a revocation, never cancels it.
 */
export class CredentialNews {
  constructor(
    private readonly transport: Transport,
    private readonly log: Logger,
  ) {}

  async publish(change: CredentialChange): Promise<void> {
    await this.transport.publish(channels.credentials(), JSON.stringify(change)).catch((err: unknown) => {
      this.log.warn({ err, change }, 'credential change not announced; nodes will see it on their next check');
    });
  }

  /** Resolves once the subscription is live; returns the unsubscribe function. */
  subscribe(handler: (change: CredentialChange) => void): Promise<() => Promise<void>> {
    return this.transport.subscribe(channels.credentials(), (raw) => {
      try {
        handler(JSON.parse(raw) as CredentialChange);
      } catch (err) {
        this.log.warn({ err }, 'dropped a malformed credential change');
      }
    });
  }
}
