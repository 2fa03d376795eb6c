import type { Logger } from 'pino';
import type { ChatLabels } from '../msgnet-driver.js';
import type { SessionStorage } from './baileys-auth-state.js';

export const LABEL_CHATS_KEY = 'labels:chats';
export const LABEL_NAMES_KEY = 'labels:names';

/**
 * The chat labels this session has seen. Baileys has no "list labels" call, only `labels.edit` and
 * `labels.association` events, so the book is kept in the instance's auth namespace (`labels:*`).
 */
export class LabelBook {
  readonly #chats = new Map<string, Set<string>>();
  readonly #names = new Map<string, string>();
  /** Associations seen during a full resync (`undefined` outside one). */
  #seen: Set<string> | undefined;
  #persistQueued = false;

  private constructor(
    private readonly storage: SessionStorage,
    private readonly log: Logger,
  ) {}

  static async load(storage: SessionStorage, log: Logger): Promise<LabelBook> {
    const book = new LabelBook(storage, log);
    const found = await storage.getMany([LABEL_CHATS_KEY, LABEL_NAMES_KEY]);
    const chats = parse<Record<string, string[]>>(found.get(LABEL_CHATS_KEY)) ?? {};
    const names = parse<Record<string, string>>(found.get(LABEL_NAMES_KEY)) ?? {};
    for (const [chat, ids] of Object.entries(chats)) if (ids.length) book.#chats.set(chat, new Set(ids));
    for (const [id, name] of Object.entries(names)) book.#names.set(id, name);
    return book;
  }

  nameOf(labelId: string): string {
    return this.#names.get(labelId) ?? '';
  }

  /** A `labels.edit`; true when something changed (worth an event). */
  edit(id: string, name: string | undefined, deleted: boolean): boolean {
    if (deleted) {
      let changed = this.#names.delete(id);
      for (const [chat, ids] of this.#chats) {
        if (ids.delete(id)) changed = true;
        if (ids.size === 0) this.#chats.delete(chat);
      }
      if (changed) this.#persist();
      return changed;
    }
    if (name === undefined || this.#names.get(id) === name) return false;
    this.#names.set(id, name);
    this.#persist();
    return true;
  }

  /** A chat `labels.association`; true when the chat's labels changed. */
  associate(chatJid: string, labelId: string, add: boolean): boolean {
    if (add) this.#seen?.add(pairKey(chatJid, labelId));
    const ids = this.#chats.get(chatJid);
    if (add ? ids?.has(labelId) : !ids?.has(labelId)) return false;
    if (add) this.#chats.set(chatJid, (ids ?? new Set()).add(labelId));
    else {
      ids!.delete(labelId);
      if (ids!.size === 0) this.#chats.delete(chatJid);
    }
    this.#persist();
    return true;
  }

  /** Starts a full resync: associations not seen again before `endRebuild` are gone. */
  beginRebuild(): void {
    this.#seen = new Set();
  }

  /**
   * Ends a full resync and returns the associations it dropped. A resync may give up on a collection
   * without failing, so nothing is dropped unless it actually delivered labels.
   */
  endRebuild(ok: boolean): { chatJid: string; labelId: string }[] {
    const seen = this.#seen;
    this.#seen = undefined;
    if (!ok || !seen || seen.size === 0) return [];
    const dropped: { chatJid: string; labelId: string }[] = [];
    for (const [chatJid, ids] of this.#chats) {
      for (const labelId of ids) if (!seen.has(pairKey(chatJid, labelId))) dropped.push({ chatJid, labelId });
    }
    for (const { chatJid, labelId } of dropped) this.associate(chatJid, labelId, false);
    return dropped;
  }

  list(): ChatLabels[] {
    return [...this.#chats].map(([chatJid, ids]) => ({
      chatJid,
      labels: [...ids].map((id) => ({ id, name: this.nameOf(id) })),
    }));
  }

  #persist(): void {
    // One queued write at a time: it serialises the book when it starts, so it covers later changes too.
    if (this.#persistQueued) return;
    this.#persistQueued = true;
    this.storage
      .write(() => {
        this.#persistQueued = false;
        return {
          [LABEL_CHATS_KEY]: JSON.stringify(Object.fromEntries([...this.#chats].map(([c, ids]) => [c, [...ids]]))),
          [LABEL_NAMES_KEY]: JSON.stringify(Object.fromEntries(this.#names)),
        };
      })
      .catch((err: unknown) => this.log.warn({ err }, 'could not store chat labels'));
  }
}

function pairKey(chatJid: string, labelId: string): string {
  return `${chatJid}\u0000${labelId}`;
}

function parse<T>(raw: string | undefined): T | undefined {
  if (raw === undefined) return undefined;
  try {
    return JSON.parse(raw) as T;
  } catch {
    return undefined;
  }
}
