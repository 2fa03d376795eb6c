/**
 * What a reconcile pass reads from the store at rest: the whole runnable list, or the runnable version.
 *
 *   npx tsx bench/runnable-read.ts [--instances 100000]
 *
 * A SQLite store (a temporary file) with `instances` instances, half of them connected (runnable), the
 * other half never connected. Every node's reconciler runs a pass each RECONCILE_MS (1 s): it used to read
 * the runnable list each pass (`listRunnable`); it now reads the runnable version and the list only when
 * the version moved (`RunnableInstances`). Printed: each read's median time, and what it costs a node
 * per second at rest (goal: the version read under 1 % of the list's).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { randomUUID } from 'node:crypto';
import { SqliteStore } from '../src/store/sqlite/sqlite-store.js';
import { instanceRecord } from '../test/helpers/records.js';
import { fmt, median } from './stats.js';

const { values: args } = parseArgs({ options: { instances: { type: 'string', default: '100000' } } });
const N = Number(args.instances);

async function timeEach(times: number, read: () => Promise<unknown>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i < times; i++) {
    const start = performance.now();
    await read();
    samples.push(performance.now() - start);
  }
  return median(samples);
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-bench-runnable-'));
  const store = new SqliteStore(join(dir, 'store.sqlite'), { synchronous: 'normal' });
  try {
    const accountId = randomUUID();
    const at = new Date().toISOString();
    await store.accounts.create({
      id: accountId,
      name: 'bench',
      tokenHash: randomUUID(),
      instanceQuota: N,
      allowedOrigins: [],
      createdAt: at,
    });
    for (let i = 0; i < N; i++) {
      const record = instanceRecord(accountId, { name: `i${i}` });
      await store.instances.create(record, [], N);
      if (i % 2 === 0) {
        const epoch = await store.instances.claim(record.id);
        await store.instances.setConnection(record.id, epoch, {
          state: 'connected',
          numberJid: undefined,
          updatedAt: at,
        });
      }
    }
    const runnable = (await store.instances.listRunnable()).length;
    const list = await timeEach(20, () => store.instances.listRunnable());
    const version = await timeEach(2000, () => store.instances.runnableVersion());
    console.log(`${N} instances, ${runnable} runnable (SQLite)`);
    console.log(
      `listRunnable: median ${fmt(list, 2)} ms a pass = ${fmt(list / 10, 1)} % of a core per node at one pass a second`,
    );
    console.log(
      `runnableVersion: median ${fmt(version * 1000, 1)} µs a pass = ${fmt(version / 10, 4)} % of a core per node`,
    );
    const ratio = version / list;
    console.log(`version / list: ${fmt(ratio * 100, 3)} % (goal < 1 %: ${ratio < 0.01 ? 'met' : 'MISSED'})`);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
