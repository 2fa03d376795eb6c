import type { Logger } from 'pino';
import type { ChatLabels, LabelInfo } from '../msgnet-driver.js';
import type { SessionStorage } from './baileys-auth-state.js';

/** `labels:chat:<chatJid>` holds the chat's label ids (JSON array). */
export const LABEL_CHAT_PREFIX = 'labels:chat:';
/** `labels:name:<labelId>` holds the label's name. */
export const LABEL_NAME_PREFIX = 'labels:name:';

/**
 * The chat labels this session has seen. Baileys has no "list labels" call, only `labels.edit` and
 * `labels.association` events, so the book is kept in the instance's auth namespace (`labels:*`), one key
 * per chat and per label so that a change rewrites only what changed.
 */
export class LabelBook {
  readonly #chats = new Map<string, Set<string>>();
  readonly #names = new Map<string, string>();
  readonly #dirtyChats = new Set<string>();
  readonly #dirtyNames = new Set<string>();
  /** Associations seen during a full resync (`undefined` outside one). */
  #seen: Set<string> | undefined;
  #persistQueued = false;

  private constructor(
    private readonly storage: SessionStorage,
    private readonly log: Logger,
  ) {}

  static async load(storage: SessionStorage, log: Logger): Promise<LabelBook> {
    const book = new LabelBook(storage, log);
    for (const [key, raw] of await storage.list(LABEL_CHAT_PREFIX)) {
      const ids = parseIds(raw);
      if (ids.length) book.#chats.set(key.slice(LABEL_CHAT_PREFIX.length), new Set(ids));
    }
    for (const [key, name] of await storage.list(LABEL_NAME_PREFIX)) {
      book.#names.set(key.slice(LABEL_NAME_PREFIX.length), name);
    }
    return book;
  }

  nameOf(labelId: string): string {
    return this.#names.get(labelId) ?? '';
  }

  /** A `labels.edit`; true when something changed (worth an event). */
  edit(id: string, name: string | undefined, deleted: boolean): boolean {
    if (deleted) {
      let changed = this.#names.delete(id);
      if (changed) this.#dirtyNames.add(id);
      for (const [chat, ids] of this.#chats) {
        if (!ids.delete(id)) continue;
        changed = true;
        this.#dirtyChats.add(chat);
        if (ids.size === 0) this.#chats.delete(chat);
      }
      if (changed) this.#persist();
      return changed;
    }
    if (name === undefined || this.#names.get(id) === name) return false;
    this.#names.set(id, name);
    this.#dirtyNames.add(id);
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
    this.#dirtyChats.add(chatJid);
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

  /** Every label the account has (seen through `labels.edit`), chat or no chat. */
  labels(): LabelInfo[] {
    return [...this.#names]
      .map(([id, name]) => ({ id, name }))
      .sort((a, b) => a.id.localeCompare(b.id, 'en', { numeric: true }));
  }

  has(labelId: string): boolean {
    return this.#names.has(labelId);
  }

  /** One chat's labels. */
  chat(chatJid: string): ChatLabels {
    return { chatJid, labels: [...(this.#chats.get(chatJid) ?? [])].map((id) => ({ id, name: this.nameOf(id) })) };
  }

  list(): ChatLabels[] {
    return [...this.#chats].map(([chatJid, ids]) => ({
      chatJid,
      labels: [...ids].map((id) => ({ id, name: this.nameOf(id) })),
    }));
  }

  #persist(): void {
    // One queued write at a time: it takes the dirty keys when it starts, so it covers later changes too.
    if (this.#persistQueued) return;
    this.#persistQueued = true;
    let taken: { chats: string[]; names: string[] } | undefined;
    this.storage
      .write(() => {
        this.#persistQueued = false;
        taken = { chats: [...this.#dirtyChats], names: [...this.#dirtyNames] };
        const entries: Record<string, string | null> = {};
        for (const chat of this.#dirtyChats) {
          const ids = this.#chats.get(chat);
          entries[LABEL_CHAT_PREFIX + chat] = ids?.size ? JSON.stringify([...ids]) : null;
        }
        for (const id of this.#dirtyNames) entries[LABEL_NAME_PREFIX + id] = this.#names.get(id) ?? null;
        this.#dirtyChats.clear();
        this.#dirtyNames.clear();
        return entries;
      })
      .catch((err: unknown) => {
        // Still dirty: the next change stores them too.
        taken?.chats.forEach((chat) => this.#dirtyChats.add(chat));
        taken?.names.forEach((id) => this.#dirtyNames.add(id));
        this.log.warn({ err }, 'could not store chat labels');
      });
  }
}

function pairKey(chatJid: string, labelId: string): string {
  return `${chatJid}\u0000${labelId}`;
}

function parseIds(raw: string): string[] {
  try {
    const ids = JSON.parse(raw) as unknown;
    return Array.isArray(ids) ? ids.filter((id): id is string => typeof id === 'string') : [];
  } catch {
    return [];
  }
}
