import type { Logger } from 'pino';
import type { SessionStorage } from './baileys-auth-state.js';
import { DirtyKeys } from './dirty-keys.js';

/** `polls:<messageId>` holds one poll (JSON): what a vote on it needs to be read. */
export const POLL_PREFIX = 'polls:';
/** Votes on older polls are reported without their options. */
export const MAX_POLLS = 1024;

/** A poll as its votes need it: the secret they are encrypted with, and the options their hashes name. */
export interface PollRecord {
  question: string;
  options: string[];
  /** The creation message's `messageContextInfo.messageSecret` (32 bytes). */
  secret: Buffer;
  /** Created by this account (votes are then encrypted for our own addresses). */
  fromMe: boolean;
  /** The creator's addresses when someone else created it (phone-number JID and LID, as known). */
  creators: string[];
}

interface StoredPoll {
  question: string;
  options: string[];
  secret: string;
  fromMe: boolean;
  creators: string[];
  /** When it was remembered (Unix ms), to keep the newest ones on load. */
  at: number;
}

/**
 * The polls this session sent or received, by message id. Baileys 7 does not decrypt votes, and a vote
 * only names the poll's id, so the secret and options are kept in the instance's auth namespace, newest
 * `max` only, and survive a restart or a move to another node.
 */
export class PollBook {
  readonly #polls = new Map<string, { poll: PollRecord; at: number }>();
  readonly #dirty: DirtyKeys;

  private constructor(
    storage: SessionStorage,
    log: Logger,
    private readonly max: number,
    private readonly now: () => number,
  ) {
    this.#dirty = new DirtyKeys(storage, (ids) => this.#entries(ids), log, 'polls');
  }

  static async load(
    storage: SessionStorage,
    log: Logger,
    options: { max?: number; now?: () => number } = {},
  ): Promise<PollBook> {
    const book = new PollBook(storage, log, options.max ?? MAX_POLLS, options.now ?? Date.now);
    const stored: [string, StoredPoll][] = [];
    for (const [key, raw] of await storage.list(POLL_PREFIX)) {
      const poll = parseStored(raw);
      if (poll) stored.push([key.slice(POLL_PREFIX.length), poll]);
    }
    stored.sort((a, b) => a[1].at - b[1].at);
    for (const [id, s] of stored) {
      const poll = {
        question: s.question,
        options: s.options,
        secret: Buffer.from(s.secret, 'base64'),
        fromMe: s.fromMe,
        creators: s.creators,
      };
      book.#polls.set(id, { poll, at: s.at });
    }
    // A smaller bound than the one the polls were stored under drops the oldest for good.
    book.#evict();
    return book;
  }

  get size(): number {
    return this.#polls.size;
  }

  get(id: string): PollRecord | undefined {
    return this.#polls.get(id)?.poll;
  }

  /** Keeps a poll (the newest `max` are kept); an unchanged poll seen again (an echo) is not rewritten. */
  remember(id: string, poll: PollRecord): void {
    const known = this.#polls.get(id)?.poll;
    if (known && samePoll(known, poll)) return;
    this.#polls.delete(id);
    this.#polls.set(id, { poll, at: this.now() });
    this.#dirty.mark(id);
    this.#evict();
    this.#dirty.flush();
  }

  #evict(): void {
    while (this.#polls.size > this.max) {
      const oldest = this.#polls.keys().next();
      if (oldest.done) break;
      this.#polls.delete(oldest.value);
      this.#dirty.mark(oldest.value);
    }
    this.#dirty.flush();
  }

  /** What is stored for these polls: each as JSON, or null for one evicted. */
  #entries(ids: string[]): Record<string, string | null> {
    const entries: Record<string, string | null> = {};
    for (const id of ids) {
      const entry = this.#polls.get(id);
      entries[POLL_PREFIX + id] = entry ? JSON.stringify(toStored(entry.poll, entry.at)) : null;
    }
    return entries;
  }
}

function toStored(poll: PollRecord, at: number): StoredPoll {
  return {
    question: poll.question,
    options: poll.options,
    secret: poll.secret.toString('base64'),
    fromMe: poll.fromMe,
    creators: poll.creators,
    at,
  };
}

function samePoll(a: PollRecord, b: PollRecord): boolean {
  return (
    a.question === b.question &&
    a.fromMe === b.fromMe &&
    a.secret.equals(b.secret) &&
    a.options.join('\u0000') === b.options.join('\u0000') &&
    a.creators.join('\u0000') === b.creators.join('\u0000')
  );
}

function parseStored(raw: string): StoredPoll | undefined {
  try {
    const value = JSON.parse(raw) as Partial<StoredPoll>;
    if (typeof value.question !== 'string' || typeof value.secret !== 'string') return undefined;
    return {
      question: value.question,
      options: strings(value.options),
      secret: value.secret,
      fromMe: value.fromMe === true,
      creators: strings(value.creators),
      at: typeof value.at === 'number' ? value.at : 0,
    };
  } catch {
    return undefined;
  }
}

function strings(value: unknown): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}
