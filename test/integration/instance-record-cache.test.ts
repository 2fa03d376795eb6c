import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { pino } from 'pino';
import { InstanceNews } from '../../src/events/instance-news.js';
import { InstanceRecordCache } from '../../src/instances/instance-record-cache.js';
import type { InstanceRecord } from '../../src/store/records.js';
import { reportInstanceChanges } from '../../src/store/report-instance-changes.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import type { Store } from '../../src/store/store.js';
import { LocalTransport } from '../../src/transport/transport.js';
import { instanceRecord } from '../helpers/records.js';

describe('InstanceRecordCache: the edge reads records without the store, and every change empties it', () => {
  let raw: SqliteStore;
  let clock: number;
  let reads: number;
  let instance: InstanceRecord;
  const accountId = randomUUID();

  const record = (name: string): InstanceRecord => instanceRecord(accountId, { name });

  /** A cache over `raw` counting its store reads, and the store whose writes it hears of. */
  const cacheAndStore = (): { cache: InstanceRecordCache; store: Store } => {
    const counted = {
      findById: (id: string) => (reads++, raw.instances.findById(id)),
      findByName: (a: string, n: string) => (reads++, raw.instances.findByName(a, n)),
    };
    const cache = new InstanceRecordCache(counted, 1000, () => clock);
    return { cache, store: reportInstanceChanges(raw, (id) => cache.changedHere(id)) };
  };

  beforeEach(async () => {
    raw = new SqliteStore(':memory:');
    await raw.accounts.create({
      id: accountId,
      name: 'acme',
      tokenHash: randomUUID(),
      instanceQuota: 5,
      allowedOrigins: [],
      createdAt: new Date().toISOString(),
    });
    instance = record('shop');
    await raw.instances.create(instance, [], 5);
    clock = 1_000_000;
    reads = 0;
  });

  afterEach(async () => {
    await raw.close();
  });

  it('reads a record once per TTL, by id or by name', async () => {
    const { cache } = cacheAndStore();
    expect((await cache.findById(instance.id))?.name).to.equal('shop');
    expect((await cache.findById(instance.id))?.name).to.equal('shop');
    expect((await cache.findByName(accountId, 'shop'))?.id).to.equal(instance.id);
    expect(reads).to.equal(1);
    clock += 1000;
    expect((await cache.findByName(accountId, 'shop'))?.id).to.equal(instance.id);
    expect(reads).to.equal(2);
    // Another account's name is not this one's, whatever the cache holds.
    expect(await cache.findByName(randomUUID(), 'shop')).to.equal(undefined);
  });

  it('drops lapsed records as others are read, so that idle instances are not kept', async () => {
    const { cache, store } = cacheAndStore();
    const other = record('other');
    await store.instances.create(other, [], 5);
    await cache.findById(instance.id);
    expect(cache.size).to.equal(1);
    clock += 1000;
    await cache.findByName(accountId, 'other');
    expect(cache.size).to.equal(1);
    expect((await cache.findByName(accountId, 'shop'))?.id).to.equal(instance.id);
    expect(reads).to.equal(3);
  });

  it('never keeps an absence: an instance created after a miss is found at once', async () => {
    const { cache, store } = cacheAndStore();
    expect(await cache.findByName(accountId, 'later')).to.equal(undefined);
    const later = record('later');
    await store.instances.create(later, [], 5);
    expect((await cache.findByName(accountId, 'later'))?.id).to.equal(later.id);
  });

  it('a change written through the store is seen at once: settings, a block, the connection, the token, deletion', async () => {
    const { cache, store } = cacheAndStore();
    await cache.findById(instance.id);
    await store.instances.updateSettings(instance.id, { autoRejectCalls: true });
    expect((await cache.findById(instance.id))?.config.settings.autoRejectCalls).to.equal(true);
    await store.instances.updateConfigBlock(instance.id, 'websocket', { enabled: true, events: [], base64: false });
    expect((await cache.findById(instance.id))?.config.websocket?.enabled).to.equal(true);
    const epoch = await store.instances.claim(instance.id);
    const connection = { state: 'connected' as const, numberJid: '5511@s.whatsapp.net', updatedAt: 'now' };
    await store.instances.setConnection(instance.id, epoch, connection);
    expect((await cache.findByName(accountId, 'shop'))?.connection.state).to.equal('connected');
    await store.instances.replaceToken(instance.id, 'new-hash', 'v1:new');
    expect((await cache.findById(instance.id))?.tokenHash).to.equal('new-hash');
    await store.instances.delete(instance.id);
    expect(await cache.findById(instance.id)).to.equal(undefined);
    expect(await cache.findByName(accountId, 'shop')).to.equal(undefined);
  });

  it('a write refused by the store still empties the entry (it may have taken effect)', async () => {
    const { cache, store } = cacheAndStore();
    await cache.findById(instance.id);
    const before = reads;
    await store.instances.setConnection(instance.id, 99, instance.connection).catch(() => undefined);
    await cache.findById(instance.id);
    expect(reads).to.equal(before + 1);
  });

  it("another node's change arrives as news; a lost one lapses with the TTL", async () => {
    const transport = new LocalTransport();
    const log = pino({ level: 'silent' });
    const here = cacheAndStore();
    const there = cacheAndStore();
    await here.cache.follow(new InstanceNews(transport, log));
    await there.cache.follow(new InstanceNews(transport, log));
    await there.cache.findById(instance.id);
    await here.store.instances.updateSettings(instance.id, { callRejectMessage: 'told' });
    await new Promise((resolve) => setImmediate(resolve));
    expect((await there.cache.findById(instance.id))?.config.settings.callRejectMessage).to.equal('told');

    // Written where no one tells (the news lost): the old record until the TTL passes.
    await raw.instances.updateSettings(instance.id, { callRejectMessage: 'untold' });
    expect((await there.cache.findById(instance.id))?.config.settings.callRejectMessage).to.equal('told');
    clock += 1000;
    expect((await there.cache.findById(instance.id))?.config.settings.callRejectMessage).to.equal('untold');
  });

  it('a read that began before a change is not kept', async () => {
    let release: () => void = () => undefined;
    const stale = instance;
    const slow = {
      findById: () =>
        new Promise<InstanceRecord | undefined>((resolve) => {
          release = () => resolve(stale);
        }),
      findByName: () => Promise.resolve(undefined),
    };
    const cache = new InstanceRecordCache(slow, 1000, () => clock);
    const pending = cache.findById(instance.id);
    cache.forget(instance.id);
    release();
    await pending;
    const fresh = { ...instance, name: 'renamed-for-the-test' };
    slow.findById = () => Promise.resolve(fresh);
    expect((await cache.findById(instance.id))?.name).to.equal('renamed-for-the-test');
  });
});
