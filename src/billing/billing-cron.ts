import { createHash } from 'node:crypto';
import { schedule } from 'node-cron';
import type { ScheduledTask } from 'node-cron';
import type { Logger } from 'pino';
import type { AccountWebhookDispatcher } from '../events/webhooks/account-webhook-dispatcher.js';
import type { BillingLedgerEntry } from '../store/records.js';
import type { Store } from '../store/store.js';
import { instanceEvents, renewalEvents } from './billing-plan.js';
import type { DueEvent } from './billing-plan.js';
import { LoopSlicer } from '../util/loop-slicer.js';
import type { BillingTerms } from './billing-plan.js';

export interface BillingCronOptions {
  store: Store;
  dispatcher: AccountWebhookDispatcher;
  terms: BillingTerms;
  /** node-cron expression of the ticks (seconds resolution allowed). */
  cron: string;
  /** A fixed interval used instead of `cron`: node-cron cannot go below one second (tests). */
  tickMs?: number;
  /** The singleton's `holding`: checked before every side effect. */
  holding: () => boolean;
  log: Logger;
  /** An entry recorded by a holder that died before queuing it is queued by another after this. @default {@link RECOVER_AFTER_MS} */
  recoverAfterMs?: number;
}

/** The default of `recoverAfterMs`: long enough that a live holder has queued what it recorded. */
export const RECOVER_AFTER_MS = 30_000;

/** Ledger entries recorded per write: 100,000 instances created at once are 100,000 events due in one tick. */
const RECORD_BATCH = 500;

/**
 * The delivery id of a ledger entry, the same at every queueing (a UUID-shaped digest of its key): a
 * holder that queued it and died before marking it sent queues it again under this id, which the queue
 * keeps once and receivers deduplicate on.
 */
export function billingDeliveryId(key: string): string {
  const h = createHash('sha256').update(`billing:${key}`).digest('hex');
  return `${h.slice(0, 8)}-${h.slice(8, 12)}-5${h.slice(13, 16)}-${((parseInt(h[16]!, 16) & 3) | 8).toString(16)}${h.slice(17, 20)}-${h.slice(20, 32)}`;
}

/**
 * The billing cron actor, run as the cluster singleton `billing-cron`. Each tick finds the due events
 * from stored timestamps, records each in the ledger (a unique key: a second holder's insert is a no-op)
 * and queues the delivery of those it recorded; entries left unqueued by a dead holder are picked up
 * once their lease ends. Missed ticks are caught up because due-ness is computed from timestamps.
 */
export class BillingCron {
  #timer: NodeJS.Timeout | undefined;
  #task: ScheduledTask | undefined;
  #running: Promise<void> | undefined;
  /** Keys this process knows are in the ledger: spares the store an insert per tick. */
  readonly #known = new Set<string>();

  constructor(private readonly options: BillingCronOptions) {}

  start(): void {
    if (this.options.tickMs !== undefined) this.#timer = setInterval(() => this.#schedule(), this.options.tickMs);
    else this.#task = schedule(this.options.cron, () => this.#schedule(), { name: 'billing-cron' });
    // At once too: a node taking over the role catches up without waiting for the next tick.
    this.#schedule();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#task?.destroy();
    this.#task = undefined;
    await this.#running;
  }

  #schedule(): void {
    if (this.#running) return;
    this.#running = this.tick()
      .catch((err: unknown) => this.options.log.error({ err }, 'billing tick failed'))
      .finally(() => (this.#running = undefined));
  }

  /** One pass; public so tests can drive two holders by hand. */
  async tick(now = Date.now()): Promise<void> {
    for (const account of await this.options.store.accounts.list()) {
      const instances = await this.options.store.instances.listByAccount(account.id);
      // An account of 100,000 instances is seconds of work: in slices, so the node's lease renewals run.
      const slicer = new LoopSlicer();
      const due: DueEvent[] = [];
      for (const instance of instances) {
        if (slicer.due()) await slicer.yield();
        due.push(...instanceEvents(account, instance, now, this.options.terms).filter((d) => !this.#known.has(d.key)));
        if (due.length >= RECORD_BATCH && !(await this.#record(due.splice(0), now))) return;
      }
      due.push(...renewalEvents(account, instances, now, this.options.terms).filter((d) => !this.#known.has(d.key)));
      if (!(await this.#record(due, now))) return;
    }
    if (!this.options.holding()) return;
    const recoverAfterMs = this.options.recoverAfterMs ?? RECOVER_AFTER_MS;
    await this.#publish(await this.options.store.billingLedger.takeUnsent(Date.now(), 100, recoverAfterMs));
  }

  /** Records due events in the ledger (each once) and publishes the ones recorded; false when the role is no longer held. */
  async #record(due: DueEvent[], now: number): Promise<boolean> {
    if (due.length === 0) return true;
    if (!this.options.holding()) return false;
    const entries: BillingLedgerEntry[] = due.map((d) => ({
      ...d,
      data: JSON.stringify(d.data),
      createdAt: new Date(now).toISOString(),
      sentAt: undefined,
    }));
    const recorded = await this.options.store.billingLedger.record(
      entries,
      Date.now() + (this.options.recoverAfterMs ?? RECOVER_AFTER_MS),
    );
    for (const d of due) this.#known.add(d.key);
    await this.#publish(entries.filter((e) => recorded.has(e.key)));
    return true;
  }

  /** Queues each entry's delivery while the role is held, then marks the queued ones sent in one write. */
  async #publish(entries: BillingLedgerEntry[]): Promise<void> {
    const sent: string[] = [];
    try {
      for (const entry of entries) {
        if (!this.options.holding()) return;
        await this.options.dispatcher.dispatch({
          id: billingDeliveryId(entry.key),
          timestamp: entry.createdAt,
          accountId: entry.accountId,
          event: entry.event,
          description: entry.description,
          data: JSON.parse(entry.data) as Record<string, unknown>,
        });
        sent.push(entry.key);
      }
    } finally {
      // Queued ones are marked even if a later one failed: queued again, each would be kept once anyway.
      await this.options.store.billingLedger.markSent(sent, new Date().toISOString());
    }
  }
}
