import type { Logger } from 'pino';
import type { SessionStorage } from './baileys-auth-state.js';
import { DirtyKeys } from './dirty-keys.js';
import { isPnJid, userJid } from './jids.js';

/** `status-audience:<jid>` marks one recipient of our statuses. */
export const AUDIENCE_PREFIX = 'status-audience:';
/** Bounds the stored list (and the fan-out of one status post). */
const MAX_AUDIENCE = 20_000;

/**
 * Who sees our statuses. A status is only delivered to the `statusJidList` sent with it (#1300), and v7
 * keeps no contact store, so the contacts and private chats this session meets are collected here and
 * kept in the auth namespace.
 */
export class StatusAudience {
  readonly #jids = new Set<string>();
  readonly #unsaved: DirtyKeys;

  private constructor(storage: SessionStorage, log: Logger) {
    this.#unsaved = new DirtyKeys(
      storage,
      (jids) => Object.fromEntries(jids.map((jid) => [AUDIENCE_PREFIX + jid, '1'])),
      log,
      'the status audience',
    );
  }

  static async load(storage: SessionStorage, log: Logger): Promise<StatusAudience> {
    const audience = new StatusAudience(storage, log);
    for (const key of (await storage.list(AUDIENCE_PREFIX)).keys()) {
      audience.#jids.add(key.slice(AUDIENCE_PREFIX.length));
    }
    return audience;
  }

  /** Adds phone-number addresses (others are ignored); stores the ones that are new. */
  add(candidates: Iterable<string | null | undefined>): void {
    for (const candidate of candidates) {
      if (!candidate || !isPnJid(candidate) || this.#jids.size >= MAX_AUDIENCE) continue;
      const jid = userJid(candidate);
      if (this.#jids.has(jid)) continue;
      this.#jids.add(jid);
      this.#unsaved.mark(jid);
    }
    this.#unsaved.flush();
  }

  /** The recipients of a status: everyone known, and always ourselves (#619). */
  recipients(ownJid: string): string[] {
    return [ownJid, ...[...this.#jids].filter((jid) => jid !== ownJid)];
  }
}
