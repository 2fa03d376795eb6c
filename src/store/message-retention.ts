import { systemClock } from '../util/clock.js';
import type { Clock } from '../util/clock.js';
import type { MessageRepository } from './store.js';

const DAY_MS = 86_400_000;

export interface PruneSchedule {
  /** Not at once: a node that starts should not begin with a long delete on a big history. @default 10000 */
  firstAfterMs: number;
  /** @default one hour */
  everyMs: number;
}

const HOURLY: PruneSchedule = { firstAfterMs: 10_000, everyMs: 60 * 60 * 1000 };

/**
 * Deletes history older than `retentionDays` on a schedule (0 keeps it forever). Every node prunes; the
 * deletes are idempotent, so several nodes on one store only repeat each other. Returns the stop.
 */
export function startMessagePruning(
  messages: MessageRepository,
  retentionDays: number,
  schedule: PruneSchedule = HOURLY,
  clock: Clock = systemClock,
): () => void {
  if (retentionDays <= 0) return () => undefined;
  const prune = () => {
    // A failed prune (store briefly away) is simply retried at the next tick.
    messages.prune(Date.now() - retentionDays * DAY_MS).catch(() => undefined);
  };
  const first = clock.after(schedule.firstAfterMs, prune, { unref: true });
  const every = clock.every(schedule.everyMs, prune, { unref: true });
  return () => {
    first();
    every();
  };
}
