import { newMessageId } from '../message-id.js';
import type { AuthStore } from '../msgnet-driver.js';
import type { OutboxEntry } from './sandbox-wire.js';

/** What an outbox entry is recorded from: its id is chosen now unless the send chose it. */
export type OutboxRecord = Omit<OutboxEntry, 'messageId' | 'timestamp'> & { messageId?: string };

/**
 * What the simulated phone sent, in the session store, as GET /api/sandbox/outbox shows it: every send,
 * status, presence, deletion, call and group invitation records one entry here.
 */
export class SandboxOutbox {
  #sent = 0;

  constructor(private readonly auth: AuthStore) {}

  async record(entry: OutboxRecord): Promise<OutboxEntry> {
    const full: OutboxEntry = { ...entry, messageId: entry.messageId ?? newMessageId(), timestamp: Date.now() };
    // The key sorts by time, then by a per-session sequence (two sends in one millisecond keep their order).
    const key = `outbox:${String(full.timestamp).padStart(15, '0')}:${String(++this.#sent).padStart(9, '0')}:${full.messageId}`;
    // A caller-chosen id is indexed in the same write, so a repeated send finds it (SandboxMessages).
    const index = entry.messageId ? { [`sentid:${full.messageId}`]: JSON.stringify(full) } : {};
    await this.auth.set({ [key]: JSON.stringify(full), ...index });
    return full;
  }
}
