import { proto } from '@whiskeysockets/baileys';
import type { WAMessage, WAMessageKey } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { SessionStorage } from './baileys-auth-state.js';
import { deserialize, serialize } from './baileys-auth-state.js';
import { DirtyKeys } from './dirty-keys.js';

/** `sent:<messageId>` holds the content of one message this session sent (Baileys' JSON of the proto). */
export const SENT_PREFIX = 'sent:';
/** `sent-hour:<hours since the epoch>` lists the ids sent in that hour, so that old contents can be dropped. */
export const SENT_HOUR_PREFIX = 'sent-hour:';
/** How long a sent message can still be asked for again (a recipient's device back from days offline asks late). */
export const SENT_RETENTION_HOURS = 48;

const HOUR_MS = 3_600_000;

/**
 * The contents of the messages this session sent, kept in the instance's auth namespace for
 * `SENT_RETENTION_HOURS`. A recipient's device that cannot decrypt a message asks for it again with a
 * retry receipt; Baileys resends it from its own per-socket cache, or from `getMessage`. After a failover
 * or a restart the new socket's cache is empty: without this, the message is lost for that recipient.
 */
export class SentMessages {
  /** Ids per hour bucket, as stored (only the buckets this process wrote or pruned are held). */
  readonly #hours = new Map<number, string[]>();
  /** Contents waiting for their write, by id. */
  readonly #pending = new Map<string, string>();
  readonly #dirty: DirtyKeys;

  private constructor(
    private readonly storage: SessionStorage,
    log: Logger,
    private readonly now: () => number,
  ) {
    this.#dirty = new DirtyKeys(storage, (keys) => this.#entries(keys), log, 'sent messages');
  }

  /** Loads the hour index, and drops the contents older than the retention. */
  static async load(storage: SessionStorage, log: Logger, now: () => number = Date.now): Promise<SentMessages> {
    const sent = new SentMessages(storage, log, now);
    const oldest = Math.floor(now() / HOUR_MS) - SENT_RETENTION_HOURS;
    const expired: Record<string, null> = {};
    for (const [key, raw] of await storage.list(SENT_HOUR_PREFIX)) {
      const hour = Number(key.slice(SENT_HOUR_PREFIX.length));
      const ids = parseIds(raw);
      if (hour >= oldest) {
        sent.#hours.set(hour, ids);
        continue;
      }
      expired[key] = null;
      for (const id of ids) expired[SENT_PREFIX + id] = null;
    }
    if (Object.keys(expired).length > 0) {
      await storage.write(() => expired).catch((err: unknown) => log.warn({ err }, 'could not drop old sent messages'));
    }
    return sent;
  }

  /** Keeps the content of a message this session sent (its own echo, `fromMe` with content). */
  remember(message: WAMessage): void {
    const id = message.key.id;
    if (!message.key.fromMe || !id || !message.message || this.#pending.has(id)) return;
    const hour = Math.floor(this.now() / HOUR_MS);
    const ids = this.#hours.get(hour) ?? [];
    if (!this.#hours.has(hour)) this.#hours.set(hour, ids);
    ids.push(id);
    this.#pending.set(id, serialize(proto.Message.toObject(proto.Message.fromObject(message.message))));
    this.#dirty.mark(SENT_PREFIX + id);
    this.#dirty.mark(SENT_HOUR_PREFIX + hour);
    this.#dirty.flush();
  }

  /** Baileys' `getMessage`: the content of a message this session sent, for a retry receipt. */
  async get(key: WAMessageKey): Promise<proto.IMessage | undefined> {
    const id = key.id;
    if (!id) return undefined;
    const raw = this.#pending.get(id) ?? (await this.storage.read([SENT_PREFIX + id])).get(SENT_PREFIX + id);
    return raw === undefined ? undefined : proto.Message.fromObject(deserialize<object>(raw));
  }

  #entries(keys: string[]): Record<string, string | null> {
    const entries: Record<string, string | null> = {};
    for (const key of keys) {
      if (key.startsWith(SENT_HOUR_PREFIX)) {
        const ids = this.#hours.get(Number(key.slice(SENT_HOUR_PREFIX.length)));
        if (ids) entries[key] = JSON.stringify(ids);
        continue;
      }
      const id = key.slice(SENT_PREFIX.length);
      const content = this.#pending.get(id);
      if (content === undefined) continue;
      entries[key] = content;
      // Written now: reads go to the store from here on (the map holds only what waits).
      this.#pending.delete(id);
    }
    return entries;
  }
}

function parseIds(raw: string): string[] {
  try {
    const value: unknown = JSON.parse(raw);
    return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
  } catch {
    return [];
  }
}
