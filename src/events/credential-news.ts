import type { Logger } from 'pino';
import { channels } from '../redis/keys.js';
import type { Transport } from '../transport/transport.js';
import { BusNews } from './bus-news.js';

/** What changed: an instance's token, or an account (its token rotated, disabled, enabled or deleted). */
export type CredentialChange = { instanceId: string } | { accountId: string };

/**
 * Credential changes told to every node at once (Redis pub/sub in cluster mode): WebSockets opened with a
 * revoked token close within a second, and reconcilers stop or start a disabled or enabled account's
 * instances without waiting for their period. A lost message delays a revocation, never cancels it: every
 * listener also re-checks on its own period.
 */
export class CredentialNews extends BusNews<CredentialChange> {
  constructor(transport: Transport, log: Logger) {
    super(transport, channels.credentials(), log, 'credential change');
  }
}
