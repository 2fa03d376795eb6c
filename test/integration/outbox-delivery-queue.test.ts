import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { StoreUnavailableError } from '../../src/errors.js';
import { testDelivery } from '../helpers/deliveries.js';
import { DeliveryWorker } from '../../src/events/webhooks/delivery-worker.js';
import { OutboxDeliveryQueue } from '../../src/events/webhooks/outbox-delivery-queue.js';
import type { WebhookSender } from '../../src/events/webhooks/webhook-sender.js';
import { SecretBox } from '../../src/security/secret-box.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { DeliveryRepository } from '../../src/store/store.js';
import { until } from '../helpers/until.js';

const delivery = (n: number, instanceId = 'inst-1') =>
  testDelivery(n, instanceId, new Date(Date.UTC(2026, 0, 1) + n).toISOString());

/** The repository with its write calls counted. */
function counted(repo: DeliveryRepository) {
  const calls = { insert: 0, settle: 0 };
  const wrapped: DeliveryRepository = Object.create(repo) as DeliveryRepository;
  wrapped.insert = (rows, dueAt) => (calls.insert++, repo.insert(rows, dueAt));
  wrapped.settle = (settlements) => (calls.settle++, repo.settle(settlements));
  return { repo: wrapped, calls };
}

describe('OutboxDeliveryQueue (SQLite): the writes of one turn in one transaction', () => {
  let dir: string;
  let store: SqliteStore;

  beforeEach(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-outbox-'));
    store = new SqliteStore(join(dir, 'store.db'));
  });
  afterEach(async () => {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('makes one insert of the enqueues of one turn, and the worker delivers each exactly once', async () => {
    const { repo, calls } = counted(store.deliveries);
    const queue = new OutboxDeliveryQueue(repo);
    const n = 300;
    await Promise.all(Array.from({ length: n }, (_, i) => queue.enqueue([delivery(i, `inst-${i % 3}`)])));
    expect(calls.insert).to.equal(1);
    expect(await queue.depth()).to.equal(n);

    const posted: string[] = [];
    const sender = {
      send: async (_url: string, body: string) => (posted.push(body), { ok: true as const, status: 200 }),
    } as unknown as WebhookSender;
    const worker = new DeliveryWorker({
      queue,
      sender,
      secrets: new SecretBox(Buffer.alloc(32, 7)),
      policy: { maxAttempts: 3, baseDelayMs: 10, maxDelayMs: 10 },
      log: pino({ level: 'silent' }),
      concurrency: 32,
      leaseMs: 10_000,
      pollMs: 20,
    });
    worker.start();
    try {
      await until(async () => (await queue.depth()) === 0, 'the deliveries');
    } finally {
      await worker.stop();
    }
    const ns = posted.map((b) => (JSON.parse(b) as { data: { n: number } }).data.n);
    expect(ns).to.have.length(n);
    expect(new Set(ns).size).to.equal(n);
    // Completions are settled in batches, not one transaction each.
    expect(calls.settle).to.be.below(n / 4);
    // Each instance's deliveries went out in the order they were queued.
    for (const instance of [0, 1, 2]) {
      const own = ns.filter((x) => x % 3 === instance);
      expect(own).to.deep.equal([...own].sort((a, b) => a - b));
    }
  });

  it('a member that cannot be written fails alone; the others of its batch are queued', async () => {
    const queue = new OutboxDeliveryQueue(store.deliveries);
    await queue.enqueue([delivery(1)]);
    // A delivery without an instance breaks a NOT NULL column: its enqueue fails, the others succeed (d-1
    // again is a repeat of a queued id, kept once).
    const results = await Promise.allSettled([
      queue.enqueue([delivery(2), delivery(3)]),
      queue.enqueue([{ ...delivery(5), instanceId: null as unknown as string }]),
      queue.enqueue([delivery(1), delivery(4)]),
    ]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled']);
    const taken = await queue.take(10, 10_000);
    expect(taken.map((d) => d.id)).to.deep.equal(['d-1', 'd-2', 'd-3', 'd-4']);
  });

  it('an outage fails every member of the batch at once, without writing them one by one', async () => {
    let inserts = 0;
    const down = Object.create(store.deliveries) as DeliveryRepository;
    down.insert = async () => {
      inserts++;
      throw new StoreUnavailableError();
    };
    const queue = new OutboxDeliveryQueue(down);
    const results = await Promise.allSettled([queue.enqueue([delivery(1)]), queue.enqueue([delivery(2)])]);
    expect(results.map((r) => r.status)).to.deep.equal(['rejected', 'rejected']);
    expect(inserts).to.equal(1);
  });

  it('settles the completions, retries and burials of one turn in one write', async () => {
    const { repo, calls } = counted(store.deliveries);
    const queue = new OutboxDeliveryQueue(repo);
    await queue.enqueue([1, 2, 3, 4, 5].map((n) => delivery(n)));
    const [a, b, c, d, e] = await queue.take(10, 10_000);
    await Promise.all([
      queue.complete(a!),
      queue.complete(b!),
      queue.retry({ ...c!, attempts: 1, lastError: 'HTTP 503' }, Date.now() + 60_000),
      queue.bury({ ...d!, attempts: 1, lastError: 'HTTP 400' }),
      queue.complete(e!),
    ]);
    expect(calls.settle).to.equal(1);
    expect(await queue.depth()).to.equal(1);
    expect((await queue.deadLetters('inst-1')).map((l) => [l.id, l.lastError])).to.deep.equal([['d-4', 'HTTP 400']]);
  });

  it('an enqueue that resolved is committed: another connection to the file reads it at once', async () => {
    const queue = new OutboxDeliveryQueue(store.deliveries);
    await Promise.all([queue.enqueue([delivery(1)]), queue.enqueue([delivery(2), delivery(3)])]);
    // As after a crash: a new process opens the file while this one never closed anything.
    const reopened = new SqliteStore(join(dir, 'store.db'));
    try {
      const taken = await new OutboxDeliveryQueue(reopened.deliveries).take(10, 10_000);
      expect(taken.map((d) => d.id)).to.deep.equal(['d-1', 'd-2', 'd-3']);
    } finally {
      await reopened.close();
    }
  });
});
