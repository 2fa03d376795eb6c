/**
 * What Baileys' key-store transactions cost every promise of the node, as sessions accumulate.
 *
 *   npx tsx bench/key-store-promises.ts [--sessions 1000] [--promises 1000000]
 *
 * Each Baileys socket makes a key store with transactions (`addTransactionCapability`), which keeps its
 * transaction in an AsyncLocalStorage. Node 20 propagates every enabled storage at each new promise of
 * the process, and never forgets one. This times `promises` awaited promises with 1 key store that has
 * run a transaction, then with `sessions` of them: as published, each socket had its own storage and the
 * per-promise cost grew with the sockets ever opened; patched (patches/README.md), they share one.
 * Goal: the ratio stays under 1.5.
 */
import { parseArgs } from 'node:util';
import { addTransactionCapability } from '@whiskeysockets/baileys';
import type { SignalKeyStore } from '@whiskeysockets/baileys';
import pino from 'pino';
import { fmt } from './stats.js';

const { values: args } = parseArgs({
  options: {
    sessions: { type: 'string', default: '1000' },
    promises: { type: 'string', default: '1000000' },
  },
});
const SESSIONS = Number(args.sessions);
const PROMISES = Number(args.promises);
const log = pino({ level: 'silent' });
const empty: SignalKeyStore = { get: async () => ({}), set: async () => undefined };

/** As a socket does: a key store with transactions, one transaction run (which enables its storage). */
async function openKeyStores(n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const keys = addTransactionCapability(empty, log, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    await keys.transaction(async () => undefined, 'k');
  }
}

/** Nanoseconds per awaited promise, the best of three rounds. */
async function perPromise(): Promise<number> {
  let best = Infinity;
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    for (let i = 0; i < PROMISES; i++) await Promise.resolve(i);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / PROMISES);
  }
  return best;
}

async function main(): Promise<void> {
  await openKeyStores(1);
  const one = await perPromise();
  await openKeyStores(SESSIONS - 1);
  const many = await perPromise();
  console.log(`awaited promise with 1 key store: ${fmt(one, 0)} ns`);
  console.log(`awaited promise with ${SESSIONS} key stores: ${fmt(many, 0)} ns`);
  const ratio = many / one;
  console.log(`ratio ${fmt(ratio, 2)} (goal < 1.5: ${ratio < 1.5 ? 'met' : 'MISSED'})`);
}

main().catch((err: unknown) => {
  console.error(err);
  process.exitCode = 1;
});
