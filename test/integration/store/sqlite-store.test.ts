import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { FencedError, StoreUnavailableError } from '../../../src/errors.js';
import { instanceRecord } from '../../helpers/records.js';
import { SqliteStore } from '../../../src/store/sqlite/sqlite-store.js';
import Database from 'better-sqlite3';
import { storeContract } from './store-contract.js';

describe('SqliteStore', () => {
  const dirs: string[] = [];
  const fresh = () => {
    const dir = mkdtempSync(join(tmpdir(), 'switchboard-sqlite-'));
    dirs.push(dir);
    return join(dir, 'store.db');
  };

  after(() => {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  describe('contract', () => {
    storeContract(async () => new SqliteStore(fresh()));
  });

  it('syncs every commit to the disk by default (an acknowledged write survives a power loss)', async () => {
    const file = fresh();
    // The pragma is per connection: only the store's own connection can tell.
    const probe = (store: SqliteStore) => store.synchronousMode();
    const full = new SqliteStore(file);
    const normal = new SqliteStore(file, { synchronous: 'normal' });
    try {
      expect(probe(full)).to.equal('full');
      expect(probe(normal)).to.equal('normal');
    } finally {
      await full.close();
      await normal.close();
    }
  });

  it('two connections on one file see each other and share fencing', async () => {
    const file = fresh();
    const a = new SqliteStore(file);
    const b = new SqliteStore(file);
    try {
      const id = 'acct-1';
      await a.accounts.create({
        id,
        name: 'shared',
        tokenHash: 'h',
        instanceQuota: 5,
        allowedOrigins: [],
        createdAt: new Date().toISOString(),
      });
      expect((await b.accounts.findByName('shared'))?.id).to.equal(id);
      await a.instances.create(instanceRecord(id, { id: 'i-1', name: 'one' }), [], 5);
      const epochA = await a.instances.claim('i-1');
      const epochB = await b.instances.claim('i-1');
      expect(epochB).to.equal(epochA + 1);
      const err = await a.ownedState
        .write('i-1', epochA, [{ namespace: 'auth', key: 'creds', value: 'x' }])
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(FencedError);
      await b.ownedState.write('i-1', epochB, [{ namespace: 'auth', key: 'creds', value: 'y' }]);
      expect(await a.ownedState.get('i-1', 'auth', 'creds')).to.equal('y');
    } finally {
      await a.close();
      await b.close();
    }
  });

  // A node killed between its event's commit to the outbox and this mark leaves the event queued and the
  // message unmarked, so the next owner emits it again: no turn of the event loop may come in between.
  it("writes a message's emitted mark within the call, not with the next group commit", async () => {
    const file = fresh();
    const store = new SqliteStore(file);
    const raw = new Database(file, { readonly: true });
    try {
      await store.accounts.create({
        id: 'acct-m',
        name: 'marks',
        tokenHash: 'hm',
        instanceQuota: 5,
        allowedOrigins: [],
        createdAt: new Date().toISOString(),
      });
      await store.instances.create(instanceRecord('acct-m', { id: 'i-m' }), [], 5);
      await store.messages.save({
        instanceId: 'i-m',
        id: 'm1',
        chatJid: '5511900000001@s.whatsapp.net',
        fromMe: false,
        senderJid: '5511900000001@s.whatsapp.net',
        timestamp: 1000,
        type: 'text',
        text: 'hi',
        media: undefined,
        status: 'received',
      });
      const marking = store.deliveries.insertOnce([], 0, { instanceId: 'i-m', messageId: 'm1', at: 1234 });
      const seen = raw.prepare("SELECT emitted_at FROM messages WHERE id = 'm1'").get() as { emitted_at: number };
      expect(seen.emitted_at).to.equal(1234);
      await marking;
    } finally {
      raw.close();
      await store.close();
    }
  });

  it('keeps data across reopen (migrations run once)', async () => {
    const file = fresh();
    const a = new SqliteStore(file);
    await a.accounts.create({
      id: 'x',
      name: 'kept',
      tokenHash: 'h2',
      instanceQuota: 1,
      allowedOrigins: [],
      createdAt: new Date().toISOString(),
    });
    await a.close();
    const b = new SqliteStore(file);
    expect((await b.accounts.findByName('kept'))?.id).to.equal('x');
    await b.close();
  });

  describe("another process's lock on the file", () => {
    /** Holds the file's write lock from a second connection, as another node's long transaction does. */
    const lockFor = (file: string, ms: number) => {
      const other = new Database(file);
      other.prepare('BEGIN IMMEDIATE').run();
      return new Promise<void>((resolve) =>
        setTimeout(() => {
          other.prepare('COMMIT').run();
          other.close();
          resolve();
        }, ms),
      );
    };
    /** The longest gap between ticks of a 10 ms timer while `work` runs: how long the event loop stood still. */
    const longestGap = async (work: () => Promise<unknown>) => {
      let last = performance.now();
      let gap = 0;
      const timer = setInterval(() => {
        gap = Math.max(gap, performance.now() - last);
        last = performance.now();
      }, 10);
      try {
        // Started with the timer running: a call that blocks before it returns shows as a gap too.
        const result = await work();
        gap = Math.max(gap, performance.now() - last);
        return { result, gap };
      } finally {
        clearInterval(timer);
      }
    };

    it('waits for it on the event loop, and the write lands once the lock is released', async () => {
      const file = fresh();
      const store = new SqliteStore(file);
      try {
        const released = lockFor(file, 300);
        const started = performance.now();
        const { gap } = await longestGap(() => store.instances.heartbeat({ node: 'n1', token: 'n1/t' }));
        expect(performance.now() - started, 'the write waited for the lock').to.be.at.least(250);
        expect(gap, 'the event loop ran meanwhile').to.be.below(100);
        await released;
        expect((await store.instances.heartbeats(['n1'])).get('n1')?.token).to.equal('n1/t');
      } finally {
        await store.close();
      }
    });

    it('answers store unavailable once the lock outlasts the busy timeout, and writes nothing', async () => {
      const file = fresh();
      const store = new SqliteStore(file, { busyTimeoutMs: 200 });
      try {
        const released = lockFor(file, 600);
        const { result, gap } = await longestGap(() =>
          store.instances.heartbeat({ node: 'n1', token: 'n1/t' }).catch((e: unknown) => e),
        );
        expect(result).to.be.instanceOf(StoreUnavailableError);
        expect(gap, 'the event loop ran meanwhile').to.be.below(100);
        await released;
        expect((await store.instances.heartbeats(['n1'])).size).to.equal(0);
      } finally {
        await store.close();
      }
    });
  });
});
