import type { Logger } from 'pino';
import type { SessionStorage } from './baileys-auth-state.js';
import { isPnJid, userJid } from './jids.js';

export const AUDIENCE_KEY = 'status:audience';
/** Bounds the stored list (and the fan-out of one status post). */
const MAX_AUDIENCE = 20_000;

/**
 * Who sees our statuses. A status is only delivered to the `statusJidList` sent with it (#1300), and v7
 * keeps no contact store, so the contacts and private chats this session meets are collected here and
 * kept in the auth namespace.
 */
export class StatusAudience {
  readonly #jids = new Set<string>();
  #persistQueued = false;

  private constructor(
    private readonly storage: SessionStorage,
    private readonly log: Logger,
  ) {}

  static async load(storage: SessionStorage, log: Logger): Promise<StatusAudience> {
    const audience = new StatusAudience(storage, log);
    const raw = (await storage.getMany([AUDIENCE_KEY])).get(AUDIENCE_KEY);
    if (raw !== undefined) {
      try {
        for (const jid of JSON.parse(raw) as string[]) audience.#jids.add(jid);
      } catch {
        log.warn('stored status audience is not valid JSON; starting empty');
      }
    }
    return audience;
  }

  /** Adds phone-number addresses (others are ignored); stores the list if it grew. */
  add(candidates: Iterable<string | null | undefined>): void {
    let grew = false;
    for (const candidate of candidates) {
      if (!candidate || !isPnJid(candidate) || this.#jids.size >= MAX_AUDIENCE) continue;
      const jid = userJid(candidate);
      if (this.#jids.has(jid)) continue;
      this.#jids.add(jid);
      grew = true;
    }
    if (grew) this.#persist();
  }

  /** The recipients of a status: everyone known, and always ourselves (#619). */
  recipients(ownJid: string): string[] {
    return [ownJid, ...[...this.#jids].filter((jid) => jid !== ownJid)];
  }

  #persist(): void {
    if (this.#persistQueued) return;
    this.#persistQueued = true;
    this.storage
      .write(() => {
        this.#persistQueued = false;
        return { [AUDIENCE_KEY]: JSON.stringify([...this.#jids]) };
      })
      .catch((err: unknown) => this.log.warn({ err }, 'could not store the status audience'));
  }
}
