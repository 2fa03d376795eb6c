import { appendFileSync } from 'node:fs';
import type { ActorContext } from './instance-actor.js';

/** Owned-state namespace of the probe's writes. */
export const PROBE_NAMESPACE = 'probe';

/** One owned write the store accepted, as the cluster tests read it back. */
export interface ProbeRecord {
  kind?: 'write';
  instance: string;
  node: string;
  epoch: number;
  /** Wall-clock milliseconds (fractional) just before the write was sent, and just after it was accepted. */
  start: number;
  end: number;
}

/**
 * A moment at which an actor held itself the owner, free to act outside the store (its lease valid on
 * its own monotonic clock): two nodes must never both be at such a moment for one instance.
 */
export interface OwnerRecord {
  kind: 'owner';
  instance: string;
  node: string;
  epoch: number;
  /** Wall-clock milliseconds (fractional) just after the owner check passed. */
  at: number;
}

const wallNow = () => performance.timeOrigin + performance.now();

/**
 * Test-only: records every accepted instance-owned write as (instance, node, epoch), one JSON line per
 * write, appended to a file shared by all node processes of a test. Enabled by TEST_PROBE_FILE only.
 */
export class TestProbe {
  constructor(
    private readonly file: string,
    readonly writeIntervalMs: number,
  ) {}

  /** Records that the actor may act now (its owner check passes); nothing when it may not. */
  owning(ctx: ActorContext): void {
    try {
      ctx.assertOwner();
    } catch {
      return;
    }
    const record: OwnerRecord = {
      kind: 'owner',
      instance: ctx.instanceId,
      node: ctx.nodeId,
      epoch: ctx.epoch,
      at: wallNow(),
    };
    appendFileSync(this.file, `${JSON.stringify(record)}\n`);
  }

  /** One owned write through the actor's fenced path; recorded only when the store accepts it. */
  async write(ctx: ActorContext): Promise<void> {
    const start = wallNow();
    await ctx.writeOwned([
      { namespace: PROBE_NAMESPACE, key: 'last', value: JSON.stringify({ node: ctx.nodeId, epoch: ctx.epoch }) },
    ]);
    const record: ProbeRecord = { instance: ctx.instanceId, node: ctx.nodeId, epoch: ctx.epoch, start, end: wallNow() };
    // One small O_APPEND write per line: lines from several processes never interleave.
    appendFileSync(this.file, `${JSON.stringify(record)}\n`);
  }
}
