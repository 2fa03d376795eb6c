import type { Logger } from 'pino';
import { NotOwnerError, isOwnershipLoss } from '../../errors.js';
import { ChatLanes } from './chat-lanes.js';

/** A deadline found already past (recovery, a failed step) runs after this, so a failing step cannot spin. */
const OVERDUE_DELAY_MS = 1000;
const MAX_TIMER_MS = 2 ** 31 - 1;

export interface ChatSchedulerOptions {
  instanceId: string;
  log: () => Logger;
  /** A chat's deadlines (undefined where it has none of that kind): its timer is armed for the earliest. */
  deadlines: (chat: string) => (number | undefined)[];
  /** Runs on the chat's lane when its timer fires. */
  onDue: (chat: string) => Promise<void>;
}

/**
 * When the work of an instance's chats runs: one lane per chat, the sleeps of its running job, the controls
 * waiting for it, and one timer for its next deadline, re-armed after every job.
 */
export class ChatScheduler {
  #stopped = false;
  readonly #timers = new Map<string, NodeJS.Timeout>();
  readonly #lanes = new ChatLanes();
  /** Sleeps of each chat's running job, cut short by a control or a stop. */
  readonly #interrupts = new Map<string, AbortController>();
  /** Controls (start, pause, resume, close) waiting for their chat's lane: replies hold back meanwhile. */
  readonly #controls = new Map<string, number>();

  constructor(private readonly options: ChatSchedulerOptions) {}

  get stopped(): boolean {
    return this.#stopped;
  }

  /** Ends every timer and cuts short every sleep; no job runs after this (wait for them with `idle`). */
  stop(): void {
    this.#stopped = true;
    for (const t of this.#timers.values()) clearTimeout(t);
    this.#timers.clear();
    for (const c of this.#interrupts.values()) c.abort();
  }

  /** Resolves when every lane has run out of work. */
  idle(): Promise<void> {
    return this.#lanes.idle();
  }

  lane<T>(chat: string, job: () => Promise<T>): Promise<T> {
    return this.#lanes.run(chat, async () => {
      if (this.#stopped) throw new NotOwnerError(this.options.instanceId);
      try {
        return await job();
      } finally {
        this.#interrupts.delete(chat);
        if (!this.#stopped) this.#arm(chat);
      }
    });
  }

  /** Queues work on a chat's lane without waiting for it; a failure is logged. */
  fire(chat: string, job: () => Promise<void>): void {
    this.lane(chat, job).catch((err: unknown) => {
      if (!isOwnershipLoss(err)) this.options.log().error({ err, chat }, 'chatbot step failed');
    });
  }

  /** The signal that cuts short the sleeps of a chat's running job. */
  signal(chat: string): AbortSignal {
    let controller = this.#interrupts.get(chat);
    if (!controller) this.#interrupts.set(chat, (controller = new AbortController()));
    if (this.controlWaiting(chat) || this.#stopped) controller.abort();
    return controller.signal;
  }

  /** Whether a control waits for the chat's lane: its replies hold back meanwhile. */
  controlWaiting(chat: string): boolean {
    return (this.#controls.get(chat) ?? 0) > 0;
  }

  /** Runs a control on a chat's lane, cutting short what the lane sleeps on and holding replies back meanwhile. */
  async control<T>(chat: string, job: () => Promise<T>): Promise<T> {
    this.#controls.set(chat, (this.#controls.get(chat) ?? 0) + 1);
    this.#interrupts.get(chat)?.abort();
    let released = false;
    const release = () => {
      if (released) return;
      released = true;
      const n = (this.#controls.get(chat) ?? 1) - 1;
      if (n > 0) this.#controls.set(chat, n);
      else this.#controls.delete(chat);
    };
    try {
      return await this.lane(chat, async () => {
        release();
        return await job();
      });
    } finally {
      release();
    }
  }

  #arm(chat: string): void {
    clearTimeout(this.#timers.get(chat));
    this.#timers.delete(chat);
    const deadlines = this.options.deadlines(chat).filter((d) => d !== undefined);
    if (deadlines.length === 0) return;
    const wait = Math.min(...deadlines) - Date.now();
    const delay = wait <= 0 ? OVERDUE_DELAY_MS : Math.min(wait, MAX_TIMER_MS);
    this.#timers.set(
      chat,
      setTimeout(() => {
        this.#timers.delete(chat);
        this.fire(chat, () => this.options.onDue(chat));
      }, delay),
    );
  }
}
