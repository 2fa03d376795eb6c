import { expect } from 'chai';
import { addTransactionCapability } from '@whiskeysockets/baileys';
import type { SignalDataTypeMap, SignalKeyStore } from '@whiskeysockets/baileys';
import pino from 'pino';

type Keys = { [T in keyof SignalDataTypeMap]?: { [id: string]: SignalDataTypeMap[T] | null } };

/** A key store in memory that counts its reads and writes. */
function memoryKeys() {
  const data: Record<string, Record<string, unknown>> = {};
  const calls = { get: 0, set: 0 };
  const store: SignalKeyStore = {
    async get<T extends keyof SignalDataTypeMap>(type: T, ids: string[]) {
      calls.get++;
      const found = ids.filter((id) => data[type]?.[id] !== undefined).map((id) => [id, data[type]![id]]);
      return Object.fromEntries(found) as { [id: string]: SignalDataTypeMap[T] };
    },
    async set(keys: Keys) {
      calls.set++;
      for (const [type, byId] of Object.entries(keys)) Object.assign((data[type] ??= {}), byId);
    },
  };
  return { store, calls };
}

const options = { maxCommitRetries: 1, delayBetweenTriesMs: 1 };
const log = pino({ level: 'silent' });

// The patch shares one AsyncLocalStorage among the key stores of every socket; each must still see only
// its own transaction.
describe('Baileys key-store transactions (one shared async storage, patched)', () => {
  it('keeps each store in its own transaction, even when one runs inside another', async () => {
    const a = memoryKeys();
    const b = memoryKeys();
    const ta = addTransactionCapability(a.store, log, options);
    const tb = addTransactionCapability(b.store, log, options);
    await ta.transaction(async () => {
      await ta.set({ 'sender-key-memory': { x: { k: true } } });
      expect(a.calls.set, 'a write in a transaction waits for its commit').to.equal(0);
      expect(ta.isInTransaction()).to.equal(true);
      expect(tb.isInTransaction(), 'b is not in a transaction').to.equal(false);
      await tb.set({ 'sender-key-memory': { y: { k: true } } });
      expect(b.calls.set, "b writes at once: a's transaction is not b's").to.equal(1);
      await tb.transaction(async () => {
        expect(tb.isInTransaction()).to.equal(true);
        expect(ta.isInTransaction(), "a's transaction still holds inside b's").to.equal(true);
        await ta.set({ 'sender-key-memory': { z: { k: true } } });
        await tb.set({ 'sender-key-memory': { w: { k: true } } });
      }, 'b');
      expect(b.calls.set, "b's transaction committed on its own").to.equal(2);
      expect(a.calls.set).to.equal(0);
    }, 'a');
    expect(a.calls.set, "a's writes, its nested one included, in one commit").to.equal(1);
    expect(await a.store.get('sender-key-memory', ['x', 'z'])).to.have.keys(['x', 'z']);
    expect(ta.isInTransaction()).to.equal(false);
  });

  it('runs transactions of many stores at once without mixing them', async () => {
    const stores = Array.from({ length: 50 }, () => memoryKeys());
    const txs = stores.map((s) => addTransactionCapability(s.store, log, options));
    await Promise.all(
      txs.map((tx, i) =>
        tx.transaction(async () => {
          await new Promise((resolve) => setTimeout(resolve, (i * 7) % 11));
          await tx.set({ 'sender-key-memory': { [`id${i}`]: { k: true } } });
        }, `k${i}`),
      ),
    );
    for (const [i, s] of stores.entries()) {
      expect(s.calls.set).to.equal(1);
      expect(Object.keys(await s.store.get('sender-key-memory', [`id${i}`, `id${(i + 1) % 50}`]))).to.deep.equal([
        `id${i}`,
      ]);
    }
  });
});
