import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { ConflictError, FencedError, QuotaExceededError } from '../../../src/errors.js';
import { AUTH_NAMESPACE } from '../../../src/store/namespaces.js';
import { DEFAULT_SETTINGS } from '../../../src/store/records.js';
import type { ConnectionState } from '../../../src/store/records.js';
import type {
  AccountRecord,
  ChatbotBotRecord,
  HelpdeskConfig,
  InstanceRecord,
  MessageRecord,
  WebhookRecord,
} from '../../../src/store/records.js';
import type { Store } from '../../../src/store/store.js';

const HELPDESK_BLOCK: HelpdeskConfig = {
  enabled: true,
  baseUrl: 'https://chatwoot.example',
  accountId: 1,
  apiTokenSealed: 'sealed',
  inboxName: 'Switchboard',
  signMessages: false,
  ignoreGroups: false,
  startAsPending: false,
  reopenResolved: true,
  inboxId: 7,
  status: 'active',
  lastError: undefined,
};

/**
 * The behaviour every Store implementation must show. Each implementation's test file calls this with a
 * factory that returns a fresh, empty store.
 */
export function storeContract(openStore: () => Promise<Store>): void {
  let store: Store;

  beforeEach(async () => {
    store = await openStore();
  });

  afterEach(async () => {
    await store.close();
  });

  const now = () => new Date().toISOString();

  function account(name = `acct-${randomUUID().slice(0, 8)}`, quota = 10): AccountRecord {
    return {
      id: randomUUID(),
      name,
      tokenHash: randomUUID(),
      instanceQuota: quota,
      allowedOrigins: ['https://a.example'],
      createdAt: now(),
    };
  }

  function instance(accountId: string, name = `inst-${randomUUID().slice(0, 8)}`): InstanceRecord {
    return {
      id: randomUUID(),
      accountId,
      name,
      tokenHash: randomUUID(),
      tokenSealed: 'v1:sealed',
      ownerEpoch: 0,
      config: {
        settings: { ...DEFAULT_SETTINGS },
        proxy: {
          enabled: true,
          host: 'p.example',
          port: '8080',
          protocol: 'socks5',
          user: 'u',
          passwordSealed: 'v1:pw',
        },
        websocket: undefined,
        helpdesk: undefined,
        chatbot: undefined,
        storage: undefined,
      },
      connection: { state: 'disconnected', numberJid: undefined, updatedAt: now() },
      createdAt: now(),
    };
  }

  function webhook(instanceId: string, label = 'default'): WebhookRecord {
    return {
      instanceId,
      label,
      enabled: true,
      url: 'https://hooks.example/x',
      authorizationSealed: 'v1:auth',
      byEvents: false,
      events: ['message.exchange'],
      base64: false,
      createdAt: now(),
      updatedAt: now(),
    };
  }

  async function seeded() {
    const a = account();
    await store.accounts.create(a);
    const i = instance(a.id);
    await store.instances.create(i, [webhook(i.id)], a.instanceQuota);
    return { a, i };
  }

  describe('accounts', () => {
    it('creates and finds an account by id, name and token hash', async () => {
      const a = account();
      await store.accounts.create(a);
      expect(await store.accounts.findById(a.id)).to.deep.equal(a);
      expect(await store.accounts.findByName(a.name)).to.deep.equal(a);
      expect(await store.accounts.findByTokenHash(a.tokenHash)).to.deep.equal(a);
      expect(await store.accounts.findByName('missing')).to.equal(undefined);
      expect(await store.accounts.count()).to.equal(1);
    });

    it('refuses a duplicate name or token hash with ConflictError', async () => {
      const a = account('same');
      await store.accounts.create(a);
      const err = await store.accounts.create({ ...account('same') }).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConflictError);
      const err2 = await store.accounts.create({ ...account(), tokenHash: a.tokenHash }).catch((e: unknown) => e);
      expect(err2).to.be.instanceOf(ConflictError);
      expect(await store.accounts.count()).to.equal(1);
    });

    it('replaces the token hash so that the old one no longer finds the account', async () => {
      const a = account();
      await store.accounts.create(a);
      expect(await store.accounts.replaceTokenHash(a.name, 'new-hash')).to.equal(true);
      expect(await store.accounts.findByTokenHash(a.tokenHash)).to.equal(undefined);
      expect((await store.accounts.findByTokenHash('new-hash'))?.id).to.equal(a.id);
      expect(await store.accounts.replaceTokenHash('nobody', 'x')).to.equal(false);
    });

    it('disables and enables an account by name, returning the record as it now is', async () => {
      const a = account();
      await store.accounts.create(a);
      const at = now();
      expect(await store.accounts.setDisabled(a.name, at)).to.deep.equal({ ...a, disabledAt: at });
      expect((await store.accounts.findByTokenHash(a.tokenHash))?.disabledAt).to.equal(at);
      expect(await store.accounts.setDisabled(a.name, undefined)).to.deep.equal(a);
      expect(await store.accounts.findById(a.id)).to.deep.equal(a);
      expect(await store.accounts.setDisabled('nobody', at)).to.equal(undefined);
    });

    it('deletes an account with its webhook and ledger, only once it has no instance', async () => {
      const { a, i } = await seeded();
      await store.accountWebhooks.save({
        accountId: a.id,
        url: 'https://h.example/a',
        events: [],
        enabled: true,
        secretSealed: 'v1:s',
        createdAt: now(),
        updatedAt: now(),
      });
      const entry = { key: `k-${randomUUID()}`, accountId: a.id, event: 'e', description: 'd', data: '{}' };
      await store.billingLedger.record([{ ...entry, createdAt: now(), sentAt: undefined }], 0);
      expect(await store.accounts.delete(a.id).catch((e: unknown) => e)).to.be.instanceOf(ConflictError);
      expect(await store.accounts.findById(a.id)).to.not.equal(undefined);
      await store.instances.delete(i.id);
      expect(await store.accounts.delete(a.id)).to.equal(true);
      expect(await store.accounts.findById(a.id)).to.equal(undefined);
      expect(await store.accountWebhooks.get(a.id)).to.equal(undefined);
      expect(await store.billingLedger.list(a.id)).to.deep.equal([]);
      expect(await store.accounts.delete(a.id)).to.equal(false);
      // The name is free again.
      await store.accounts.create({ ...account(a.name) });
    });

    it('lists accounts in creation order', async () => {
      const first = { ...account('b-first'), createdAt: '2026-01-01T00:00:00.000Z' };
      const second = { ...account('a-second'), createdAt: '2026-01-02T00:00:00.000Z' };
      await store.accounts.create(second);
      await store.accounts.create(first);
      expect((await store.accounts.list()).map((x) => x.name)).to.deep.equal(['b-first', 'a-second']);
    });
  });

  describe('instances', () => {
    it('replaces the instance token: the old hash finds nothing, a taken hash is refused', async () => {
      const { a, i } = await seeded();
      expect(await store.instances.replaceToken(i.id, 'rotated-hash', 'v1:rotated')).to.equal(true);
      expect(await store.instances.findByTokenHash(i.tokenHash)).to.equal(undefined);
      const found = await store.instances.findByTokenHash('rotated-hash');
      expect([found?.id, found?.tokenSealed]).to.deep.equal([i.id, 'v1:rotated']);
      const other = instance(a.id);
      await store.instances.create(other, [], 10);
      const taken = await store.instances.replaceToken(other.id, 'rotated-hash', 'v1:x').catch((e: unknown) => e);
      expect(taken).to.be.instanceOf(ConflictError);
      expect(await store.instances.replaceToken(randomUUID(), 'h', 's')).to.equal(false);
    });

    it('creates an instance with its webhooks and finds it every way', async () => {
      const { a, i } = await seeded();
      const found = await store.instances.findById(i.id);
      expect(found?.name).to.equal(i.name);
      expect(found?.config.proxy).to.deep.equal(i.config.proxy);
      expect(found?.config.settings).to.deep.equal(DEFAULT_SETTINGS);
      expect(found?.config.websocket).to.equal(undefined);
      expect(found?.connection.state).to.equal('disconnected');
      expect(found?.connection.numberJid).to.equal(undefined);
      expect((await store.instances.findByName(a.id, i.name))?.id).to.equal(i.id);
      expect((await store.instances.findByTokenHash(i.tokenHash))?.id).to.equal(i.id);
      expect(await store.instances.findByName(randomUUID(), i.name)).to.equal(undefined);
      expect(await store.instances.nameExists(i.name)).to.equal(true);
      expect(await store.instances.nameExists('nope')).to.equal(false);
      const hooks = await store.webhooks.list(i.id);
      expect(hooks).to.have.length(1);
      const { createdAt: _c, updatedAt: _u, ...stored } = hooks[0]!;
      const { createdAt: _c2, updatedAt: _u2, ...expected } = webhook(i.id);
      expect(stored).to.deep.equal(expected);
    });

    it('refuses a duplicate name within an account but not across accounts', async () => {
      const { a, i } = await seeded();
      const dup = await store.instances.create({ ...instance(a.id, i.name) }, [], 10).catch((e: unknown) => e);
      expect(dup).to.be.instanceOf(ConflictError);
      expect((dup as Error).message).to.equal('Instance name already exists');
      const other = account();
      await store.accounts.create(other);
      await store.instances.create(instance(other.id, i.name), [], 10);
      expect(await store.instances.countByAccount(a.id)).to.equal(1);
      expect(await store.instances.countByAccount(other.id)).to.equal(1);
    });

    it('refuses a token already in use, in any account', async () => {
      const { i } = await seeded();
      const other = account();
      await store.accounts.create(other);
      const err = await store.instances
        .create({ ...instance(other.id), tokenHash: i.tokenHash }, [], 10)
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(ConflictError);
      expect((err as Error).message).to.equal('Instance token already in use');
      expect(await store.instances.countByAccount(other.id)).to.equal(0);
    });

    it('enforces the quota atomically, even for concurrent creations', async () => {
      const a = account('quota', 2);
      await store.accounts.create(a);
      const results = await Promise.allSettled(
        Array.from({ length: 6 }, () => store.instances.create(instance(a.id), [], a.instanceQuota)),
      );
      expect(results.filter((r) => r.status === 'fulfilled')).to.have.length(2);
      for (const r of results.filter((x) => x.status === 'rejected')) {
        expect(r.reason).to.be.instanceOf(QuotaExceededError);
      }
      expect(await store.instances.countByAccount(a.id)).to.equal(2);
    });

    it('lists an account’s instances in creation order, optionally by names', async () => {
      const a = account();
      await store.accounts.create(a);
      const names = ['c', 'a', 'b'];
      for (const [n, name] of names.entries()) {
        await store.instances.create({ ...instance(a.id, name), createdAt: `2026-01-0${n + 1}T00:00:00.000Z` }, [], 10);
      }
      expect((await store.instances.listByAccount(a.id)).map((x) => x.name)).to.deep.equal(['c', 'a', 'b']);
      expect((await store.instances.listByAccount(a.id, ['b', 'c', 'zz'])).map((x) => x.name)).to.deep.equal([
        'c',
        'b',
      ]);
      expect(await store.instances.listByAccount(a.id, [])).to.deep.equal([]);
    });

    it('merges settings patches atomically and returns all seven', async () => {
      const { i } = await seeded();
      const s1 = await store.instances.updateSettings(i.id, { autoReadMessages: true });
      expect(s1).to.deep.equal({ ...DEFAULT_SETTINGS, autoReadMessages: true });
      await Promise.all([
        store.instances.updateSettings(i.id, { ignoreStatus: true }),
        store.instances.updateSettings(i.id, { callRejectMessage: 'busy' }),
      ]);
      expect((await store.instances.findById(i.id))?.config.settings).to.deep.equal({
        ...DEFAULT_SETTINGS,
        autoReadMessages: true,
        ignoreStatus: true,
        callRejectMessage: 'busy',
      });
      expect(await store.instances.updateSettings(randomUUID(), { ignoreStatus: true })).to.equal(undefined);
    });

    it('replaces or removes one configuration block, leaving the others', async () => {
      const { i } = await seeded();
      expect(
        await store.instances.updateConfigBlock(i.id, 'websocket', {
          enabled: true,
          events: ['call.update'],
          base64: true,
        }),
      ).to.equal(true);
      let found = await store.instances.findById(i.id);
      expect(found?.config.websocket).to.deep.equal({ enabled: true, events: ['call.update'], base64: true });
      expect(found?.config.proxy).to.deep.equal(i.config.proxy);
      expect(await store.instances.updateConfigBlock(i.id, 'proxy', undefined)).to.equal(true);
      found = await store.instances.findById(i.id);
      expect(found?.config.proxy).to.equal(undefined);
      expect(found?.config.websocket?.enabled).to.equal(true);
      expect(await store.instances.updateConfigBlock(randomUUID(), 'websocket', undefined)).to.equal(false);
    });

    it('deletes an instance with its webhooks and owned state', async () => {
      const { a, i } = await seeded();
      const epoch = await store.instances.claim(i.id);
      await store.ownedState.write(i.id, epoch, [{ namespace: AUTH_NAMESPACE, key: 'creds', value: '{}' }]);
      expect(await store.instances.delete(i.id)).to.equal(true);
      expect(await store.instances.findById(i.id)).to.equal(undefined);
      expect(await store.webhooks.list(i.id)).to.deep.equal([]);
      expect(await store.ownedState.get(i.id, AUTH_NAMESPACE, 'creds')).to.equal(undefined);
      expect(await store.instances.delete(i.id)).to.equal(false);
      // The freed quota slot can be used again.
      await store.instances.create(instance(a.id, i.name), [], 1);
    });
  });

  describe('fencing', () => {
    it('claim increments the owner epoch', async () => {
      const { i } = await seeded();
      expect(await store.instances.claim(i.id)).to.equal(1);
      expect(await store.instances.claim(i.id)).to.equal(2);
      expect((await store.instances.findById(i.id))?.ownerEpoch).to.equal(2);
    });

    it('concurrent claims each get a distinct epoch', async () => {
      const { i } = await seeded();
      const epochs = await Promise.all(Array.from({ length: 8 }, () => store.instances.claim(i.id)));
      expect(new Set(epochs).size).to.equal(8);
      expect(Math.max(...epochs)).to.equal(8);
    });

    it('records the holder with a claim, and forgets it on a release under the current epoch only', async () => {
      const { i } = await seeded();
      const a = { node: 'node-a', token: 'ta' };
      expect(await store.instances.ownership([i.id, randomUUID()])).to.deep.equal(new Map([[i.id, { epoch: 0 }]]));
      const e1 = await store.instances.claim(i.id, a);
      expect((await store.instances.ownership([i.id])).get(i.id)).to.deep.equal({ epoch: e1, holder: a });
      await store.instances.release(i.id, e1 - 1);
      expect((await store.instances.ownership([i.id])).get(i.id)?.holder).to.deep.equal(a);
      await store.instances.release(i.id, e1);
      expect((await store.instances.ownership([i.id])).get(i.id)).to.deep.equal({ epoch: e1 });
    });

    it('claimFrom takes only the instances whose epoch is still the one read', async () => {
      const { a } = await seeded();
      const x = instance(a.id, 'x');
      const y = instance(a.id, 'y');
      await store.instances.create(x, [], 10);
      await store.instances.create(y, [], 10);
      const read = await store.instances.ownership([x.id, y.id]);
      // Another node takes y between the read and the claim.
      await store.instances.claim(y.id, { node: 'node-b', token: 'tb' });
      const me = { node: 'node-a', token: 'ta' };
      const taken = await store.instances.claimFrom(
        [x.id, y.id].map((id) => ({ id, epoch: read.get(id)!.epoch })),
        me,
      );
      expect([...taken.entries()]).to.deep.equal([[x.id, read.get(x.id)!.epoch + 1]]);
      const now = await store.instances.ownership([x.id, y.id]);
      expect(now.get(x.id)?.holder).to.deep.equal(me);
      expect(now.get(y.id)?.holder).to.deep.equal({ node: 'node-b', token: 'tb' });
    });

    it("keeps each node's last heartbeat (its token, aged by the store's clock) and ends it only under that token", async () => {
      const a = `node-${randomUUID()}`;
      const b = `node-${randomUUID()}`;
      expect((await store.instances.heartbeats([a, b])).size).to.equal(0);
      await store.instances.heartbeat({ node: a, token: 't1' });
      await store.instances.heartbeat({ node: b, token: 'tb' });
      await new Promise((r) => setTimeout(r, 60));
      const first = (await store.instances.heartbeats([a])).get(a)!;
      expect(first.token).to.equal('t1');
      expect(first.ageMs).to.be.within(40, 5_000);
      // A renewal under a new lease replaces token and time.
      await store.instances.heartbeat({ node: a, token: 't2' });
      const beats = await store.instances.heartbeats([a, b, 'node-never-seen']);
      expect([...beats.keys()].sort()).to.deep.equal([a, b].sort());
      expect(beats.get(a)!.token).to.equal('t2');
      expect(beats.get(a)!.ageMs).to.be.below(first.ageMs);
      await store.instances.endHeartbeat({ node: a, token: 't1' });
      expect((await store.instances.heartbeats([a])).get(a)?.token, 'an old token ends nothing').to.equal('t2');
      await store.instances.endHeartbeat({ node: a, token: 't2' });
      expect((await store.instances.heartbeats([a, b])).has(a)).to.equal(false);
      expect((await store.instances.heartbeats([])).size).to.equal(0);
    });

    it('claiming a missing instance fails with FencedError', async () => {
      const err = await store.instances.claim(randomUUID()).catch((e: unknown) => e);
      expect(err).to.be.instanceOf(FencedError);
    });

    it('accepts connection writes only under the current epoch', async () => {
      const { i } = await seeded();
      const old = await store.instances.claim(i.id);
      const connected = { state: 'connected' as const, numberJid: '5511999@s.whatsapp.net', updatedAt: now() };
      await store.instances.setConnection(i.id, old, connected);
      expect((await store.instances.findById(i.id))?.connection).to.deep.equal(connected);
      const current = await store.instances.claim(i.id);
      const stale = await store.instances
        .setConnection(i.id, old, { state: 'disconnected', numberJid: undefined, updatedAt: now() })
        .catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(FencedError);
      expect((await store.instances.findById(i.id))?.connection).to.deep.equal(connected);
      await store.instances.setConnection(i.id, current, { ...connected, state: 'qr' });
      expect((await store.instances.findById(i.id))?.connection.state).to.equal('qr');
    });

    it('applies owned-state batches under the current epoch and refuses stale ones whole', async () => {
      const { i } = await seeded();
      const e1 = await store.instances.claim(i.id);
      await store.ownedState.write(i.id, e1, [
        { namespace: AUTH_NAMESPACE, key: 'creds', value: 'c1' },
        { namespace: 'keys', key: 'pre-key-1', value: 'k1' },
        { namespace: 'keys', key: 'pre-key-2', value: 'k2' },
      ]);
      expect(await store.ownedState.get(i.id, AUTH_NAMESPACE, 'creds')).to.equal('c1');
      expect([...(await store.ownedState.list(i.id, 'keys')).entries()]).to.deep.equal([
        ['pre-key-1', 'k1'],
        ['pre-key-2', 'k2'],
      ]);
      const many = await store.ownedState.getMany(i.id, 'keys', ['pre-key-2', 'missing']);
      expect([...many.entries()]).to.deep.equal([['pre-key-2', 'k2']]);

      const e2 = await store.instances.claim(i.id);
      const stale = await store.ownedState
        .write(i.id, e1, [
          { namespace: AUTH_NAMESPACE, key: 'creds', value: 'stale' },
          { namespace: 'keys', key: 'pre-key-1', value: null },
        ])
        .catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(FencedError);
      expect(await store.ownedState.get(i.id, AUTH_NAMESPACE, 'creds')).to.equal('c1');
      expect(await store.ownedState.get(i.id, 'keys', 'pre-key-1')).to.equal('k1');

      await store.ownedState.write(i.id, e2, [{ namespace: 'keys', key: 'pre-key-1', value: null }]);
      expect(await store.ownedState.get(i.id, 'keys', 'pre-key-1')).to.equal(undefined);
    });

    it('clears a namespace or everything only under the current epoch', async () => {
      const { i } = await seeded();
      const e1 = await store.instances.claim(i.id);
      await store.ownedState.write(i.id, e1, [
        { namespace: AUTH_NAMESPACE, key: 'creds', value: 'c' },
        { namespace: 'keys', key: 'k', value: 'v' },
      ]);
      const e2 = await store.instances.claim(i.id);
      expect(await store.ownedState.clear(i.id, e1, 'keys').catch((e: unknown) => e)).to.be.instanceOf(FencedError);
      expect(await store.ownedState.get(i.id, 'keys', 'k')).to.equal('v');
      await store.ownedState.clear(i.id, e2, 'keys');
      expect(await store.ownedState.get(i.id, 'keys', 'k')).to.equal(undefined);
      expect(await store.ownedState.get(i.id, AUTH_NAMESPACE, 'creds')).to.equal('c');
      await store.ownedState.clear(i.id, e2);
      expect(await store.ownedState.get(i.id, AUTH_NAMESPACE, 'creds')).to.equal(undefined);
    });

    it('a writer superseded mid-flight never wipes or overwrites the new owner state (check and write are one)', async () => {
      for (let round = 0; round < 10; round++) {
        const { i } = await seeded();
        const e1 = await store.instances.claim(i.id);
        await store.ownedState.write(i.id, e1, [{ namespace: 'keys', key: 'k', value: 'old' }]);
        const [, , takeover] = await Promise.allSettled([
          store.ownedState.clear(i.id, e1, 'keys'),
          store.ownedState.write(i.id, e1, [{ namespace: 'keys', key: 'k', value: 'stale' }]),
          (async () => {
            const e2 = await store.instances.claim(i.id);
            await store.ownedState.write(i.id, e2, [{ namespace: 'keys', key: 'k', value: 'new' }]);
          })(),
        ]);
        expect(takeover.status).to.equal('fulfilled');
        expect(await store.ownedState.get(i.id, 'keys', 'k'), `round ${round}`).to.equal('new');
      }
    });

    it('lists a namespace whole or by key prefix, nothing past the prefix', async () => {
      const { i } = await seeded();
      const epoch = await store.instances.claim(i.id);
      const keys = ['contact', 'contact:a', 'contact:\u{1F600}', 'contact:~', 'contact;', 'contacts:b', 'pre-key:1'];
      await store.ownedState.write(
        i.id,
        epoch,
        keys.map((key) => ({ namespace: AUTH_NAMESPACE, key, value: `v-${key}` })),
      );
      await store.ownedState.write(i.id, epoch, [{ namespace: 'other', key: 'contact:z', value: 'x' }]);
      const listed = await store.ownedState.list(i.id, AUTH_NAMESPACE, 'contact:');
      expect([...listed.keys()]).to.have.members(['contact:a', 'contact:\u{1F600}', 'contact:~']);
      expect(listed.get('contact:a')).to.equal('v-contact:a');
      expect([...(await store.ownedState.list(i.id, AUTH_NAMESPACE)).keys()]).to.have.members(keys);
      expect((await store.ownedState.list(i.id, AUTH_NAMESPACE, 'nothing:')).size).to.equal(0);
    });

    it('refuses owned writes to a deleted instance', async () => {
      const { i } = await seeded();
      const epoch = await store.instances.claim(i.id);
      await store.instances.delete(i.id);
      const err = await store.ownedState
        .write(i.id, epoch, [{ namespace: AUTH_NAMESPACE, key: 'creds', value: 'x' }])
        .catch((e: unknown) => e);
      expect(err).to.be.instanceOf(FencedError);
    });
  });

  describe('runnable instances', () => {
    it('leaves out the instances of a disabled account, and lists them again once it is enabled', async () => {
      const { a, i } = await seeded();
      const epoch = await store.instances.claim(i.id);
      await store.ownedState.write(i.id, epoch, [{ namespace: AUTH_NAMESPACE, key: 'creds', value: '{}' }]);
      expect(await store.instances.listRunnable()).to.include(i.id);
      await store.accounts.setDisabled(a.name, now());
      expect(await store.instances.listRunnable()).to.not.include(i.id);
      await store.accounts.setDisabled(a.name, undefined);
      expect(await store.instances.listRunnable()).to.include(i.id);
    });

    it('lists an account of more instances than one read holds, each once and in order, and its runnable ones', async function () {
      this.timeout(60_000);
      const a = account();
      await store.accounts.create(a);
      const count = 4500;
      const created: InstanceRecord[] = [];
      for (let n = 0; n < count; n++) {
        // Pairs share a creation time, so the order falls back to the name; every third one is connecting.
        const i: InstanceRecord = {
          ...instance(a.id, `n-${String(count - n).padStart(5, '0')}`),
          createdAt: new Date(Date.UTC(2026, 0, 1) + Math.floor(n / 2) * 1000).toISOString(),
          ...(n % 3 === 0 ? { connection: { state: 'connecting', numberJid: undefined, updatedAt: now() } } : {}),
        };
        await store.instances.create(i, [], count);
        created.push(i);
      }
      const expected = [...created]
        .sort((x, y) => (x.createdAt === y.createdAt ? (x.name < y.name ? -1 : 1) : x.createdAt < y.createdAt ? -1 : 1))
        .map((i) => i.name);
      expect((await store.instances.listByAccount(a.id)).map((i) => i.name)).to.deep.equal(expected);
      const runnable = await store.instances.listRunnable();
      const connecting = created.filter((_, n) => n % 3 === 0).map((i) => i.id);
      expect(runnable.filter((id) => connecting.includes(id)).sort()).to.deep.equal([...connecting].sort());
      expect(new Set(runnable).size, 'each once').to.equal(runnable.length);
    });

    it('lists instances with a saved link or a live connection state', async () => {
      const { a, i: linked } = await seeded();
      const live = instance(a.id);
      const idle = instance(a.id);
      await store.instances.create(live, [], 10);
      await store.instances.create(idle, [], 10);
      const e1 = await store.instances.claim(linked.id);
      await store.ownedState.write(linked.id, e1, [{ namespace: AUTH_NAMESPACE, key: 'creds', value: '{}' }]);
      const e2 = await store.instances.claim(live.id);
      await store.instances.setConnection(live.id, e2, { state: 'qr', numberJid: undefined, updatedAt: now() });
      expect(await store.instances.listRunnable()).to.have.members([linked.id, live.id]);
    });

    it('moves its runnable version with every change of the runnable set, and keeps it through traffic', async () => {
      // 'moves': the set changes, and the version must move. 'stays': neither changes (what messages,
      // reconnects and a first link write would otherwise cost every node: a full read).
      const { a, i } = await seeded();
      let version = await store.instances.runnableVersion();
      let listed = (await store.instances.listRunnable()).sort().join();
      const step = async (what: string, expected: 'moves' | 'stays', write: () => Promise<unknown>) => {
        await write();
        const v = await store.instances.runnableVersion();
        const now = (await store.instances.listRunnable()).sort().join();
        expect(now !== listed, `${what}: the set changed`).to.equal(expected === 'moves');
        if (expected === 'moves') expect(v, `${what}: the version`).to.not.equal(version);
        else expect(v, `${what}: the version`).to.equal(version);
        [version, listed] = [v, now];
      };
      const epoch = await store.instances.claim(i.id);
      const state = (s: ConnectionState) => () =>
        store.instances.setConnection(i.id, epoch, { state: s, numberJid: undefined, updatedAt: now() });
      const link = (key: string, value: string | null) => () =>
        store.ownedState.write(i.id, epoch, [{ namespace: AUTH_NAMESPACE, key, value }]);
      await step('connecting', 'moves', state('connecting'));
      await step('qr', 'stays', state('qr'));
      await step('the first link key', 'stays', link('creds', '{}'));
      await step('disconnected with a saved link', 'stays', state('disconnected'));
      await step('a second link key', 'stays', link('pre-key-1', 'k'));
      await step('a link key rewritten', 'stays', link('creds', '{"me":1}'));
      await step('other owned state', 'stays', () =>
        store.ownedState.write(i.id, epoch, [{ namespace: 'keys', key: 'k', value: 'v' }]),
      );
      await step('one link key of two removed', 'stays', link('pre-key-1', null));
      await step('the last link key removed', 'moves', link('creds', null));
      await step('linked again', 'moves', link('creds', '{}'));
      await step('the link cleared', 'moves', () => store.ownedState.clear(i.id, epoch, AUTH_NAMESPACE));
      await step('connected', 'moves', state('connected'));
      await step('account disabled', 'moves', () => store.accounts.setDisabled(a.name, now()));
      await step('account enabled', 'moves', () => store.accounts.setDisabled(a.name, undefined));
      const other = instance(a.id);
      await step('an instance created (not running)', 'stays', () => store.instances.create(other, [], 10));
      await step('the running instance deleted', 'moves', () => store.instances.delete(i.id));
    });
  });

  describe('webhooks', () => {
    it('upserts by label, keeping creation time, and deletes by label', async () => {
      const { i } = await seeded();
      const first = (await store.webhooks.list(i.id))[0]!;
      await store.webhooks.upsert({
        ...webhook(i.id),
        url: 'https://hooks.example/changed',
        updatedAt: '2030-01-01T00:00:00.000Z',
        createdAt: '2030-01-01T00:00:00.000Z',
      });
      await store.webhooks.upsert({
        ...webhook(i.id, 'crm'),
        authorizationSealed: undefined,
        createdAt: '2031-01-01T00:00:00.000Z',
      });
      const hooks = await store.webhooks.list(i.id);
      expect(hooks.map((h) => h.label)).to.deep.equal(['default', 'crm']);
      expect(hooks[0]?.url).to.equal('https://hooks.example/changed');
      expect(hooks[0]?.createdAt).to.equal(first.createdAt);
      expect(hooks[1]?.authorizationSealed).to.equal(undefined);
      expect(await store.webhooks.delete(i.id, 'crm')).to.equal(true);
      expect(await store.webhooks.delete(i.id, 'crm')).to.equal(false);
      expect((await store.webhooks.list(i.id)).map((h) => h.label)).to.deep.equal(['default']);
    });

    it('keeps the signing secrets: current, and the one a rotation replaced until its end', async () => {
      const { i } = await seeded();
      const signing = {
        secretSealed: 'v1:new',
        previousSecretSealed: 'v1:old',
        previousSecretUntil: '2030-01-01T00:00:00.000Z',
      };
      await store.webhooks.upsert({ ...webhook(i.id, 'signed'), ...signing });
      expect((await store.webhooks.list(i.id)).find((h) => h.label === 'signed')).to.deep.include(signing);
      await store.webhooks.upsert({ ...webhook(i.id, 'signed'), secretSealed: 'v1:newer' });
      const after = (await store.webhooks.list(i.id)).find((h) => h.label === 'signed')!;
      expect(after.secretSealed).to.equal('v1:newer');
      expect(after).not.to.have.any.keys('previousSecretSealed', 'previousSecretUntil');
      expect((await store.webhooks.list(i.id)).find((h) => h.label === 'default')).not.to.have.any.keys('secretSealed');
    });
    it('refuses an enabled webhook past the limit of enabled ones, in the same write, and never a disabled one', async () => {
      const { i } = await seeded();
      // The seeded instance has its enabled `default`: one more fits a limit of 2.
      expect(await store.webhooks.upsert(webhook(i.id, 'second'), { maxEnabled: 2 })).to.equal(true);
      expect(await store.webhooks.upsert(webhook(i.id, 'third'), { maxEnabled: 2 })).to.equal(false);
      expect(await store.webhooks.upsert({ ...webhook(i.id, 'third'), enabled: false }, { maxEnabled: 2 })).to.equal(
        true,
      );
      // Rewriting one of the enabled two is no third.
      expect(await store.webhooks.upsert(webhook(i.id, 'second'), { maxEnabled: 2 })).to.equal(true);
      const enabled = (await store.webhooks.list(i.id)).filter((h) => h.enabled).map((h) => h.label);
      expect(enabled).to.have.members(['default', 'second']);
    });
  });

  describe('webhook deliveries (outbox)', () => {
    const row = (instanceId: string, n: number) => ({
      id: `d-${n}-${randomUUID().slice(0, 6)}`,
      instanceId,
      payload: JSON.stringify({ n }),
      attempts: 0,
      lastError: undefined,
      createdAt: new Date(Date.UTC(2026, 0, 1, 0, 0, n)).toISOString(),
      updatedAt: now(),
    });

    it('takes due rows once per lease, in creation order, and completes them', async () => {
      const rows = [row('i1', 1), row('i1', 2), row('i2', 3)];
      await store.deliveries.insert(rows, 1000);
      expect(await store.deliveries.take(999, 10, 5000)).to.deep.equal([]);
      const first = await store.deliveries.take(1000, 2, 5000);
      expect(first.map((r) => r.id)).to.deep.equal([rows[0]!.id, rows[1]!.id]);
      expect(first[0]).to.deep.include({ instanceId: 'i1', payload: JSON.stringify({ n: 1 }), attempts: 0 });
      const rest = await store.deliveries.take(1000, 10, 5000);
      expect(rest.map((r) => r.id)).to.deep.equal([rows[2]!.id]);
      // A lease that ran out (its taker died) makes the row takeable again.
      expect((await store.deliveries.take(6001, 10, 5000)).map((r) => r.id)).to.have.members(rows.map((r) => r.id));
      await store.deliveries.settle(rows.map((r) => ({ id: r.id, outcome: 'completed' as const })));
      expect(await store.deliveries.countPending()).to.equal(0);
    });

    it('keeps one row per id: a producer queueing again after a crash queues once', async () => {
      const [a, b] = [row('i4', 1), row('i4', 2)];
      await store.deliveries.insert([a], 0);
      await store.deliveries.insert([{ ...a, payload: JSON.stringify({ n: 9 }) }, b], 0);
      const taken = await store.deliveries.take(0, 10, 1000);
      expect(taken.map((r) => [r.id, r.payload])).to.have.deep.members([
        [a.id, a.payload],
        [b.id, b.payload],
      ]);
      await store.deliveries.settle(taken.map((r) => ({ id: r.id, outcome: 'completed' as const })));
    });

    it('reschedules, buries and revives', async () => {
      const [a, b] = [row('i3', 1), row('i3', 2)];
      await store.deliveries.insert([a, b], 0);
      await store.deliveries.take(0, 10, 60_000);
      await store.deliveries.settle([
        { id: a.id, outcome: 'rescheduled', dueAt: 5000, attempts: 1, lastError: 'HTTP 503' },
      ]);
      expect(await store.deliveries.take(4999, 10, 1000)).to.deep.equal([]);
      const again = await store.deliveries.take(5000, 10, 1000);
      expect(again).to.have.length(1);
      expect(again[0]).to.deep.include({ id: a.id, attempts: 1, lastError: 'HTTP 503' });
      await store.deliveries.settle([{ id: b.id, outcome: 'buried', attempts: 1, lastError: 'HTTP 400' }]);
      const dead = await store.deliveries.listDead('i3');
      expect(dead.map((d) => [d.id, d.attempts, d.lastError])).to.deep.equal([[b.id, 1, 'HTTP 400']]);
      expect(await store.deliveries.listDead('other')).to.deep.equal([]);
      expect(await store.deliveries.revive('i3', ['nope'], 7000)).to.equal(0);
      expect(await store.deliveries.revive('i3', undefined, 7000)).to.equal(1);
      expect(await store.deliveries.listDead('i3')).to.deep.equal([]);
      const revived = await store.deliveries.take(7000, 10, 1000);
      expect(revived.map((r) => [r.id, r.attempts])).to.deep.include.members([[b.id, 0]]);
    });
  });

  describe('messages (chat history)', () => {
    const message = (
      instanceId: string,
      id: string,
      timestamp: number,
      chatJid = '5511900000001@s.whatsapp.net',
    ): MessageRecord => ({
      instanceId,
      id,
      chatJid,
      fromMe: id.endsWith('out'),
      senderJid: chatJid,
      timestamp,
      type: 'text',
      text: `text of ${id}`,
      media: undefined,
    });

    it('moves a message status forward only, and keeps it across a later save', async () => {
      const { i } = await seeded();
      await store.messages.save({ ...message(i.id, 's1-out', 1000), status: 'pending' });
      await store.messages.setStatus(i.id, ['s1-out', 'unknown'], 'delivered');
      expect((await store.messages.find(i.id, 's1-out'))?.status).to.equal('delivered');
      await store.messages.setStatus(i.id, ['s1-out'], 'sent');
      await store.messages.setStatus(i.id, ['s1-out'], 'failed');
      expect((await store.messages.find(i.id, 's1-out'))?.status).to.equal('delivered');
      await store.messages.setStatus(i.id, ['s1-out'], 'read');
      await store.messages.save({ ...message(i.id, 's1-out', 1000), status: 'pending' });
      expect((await store.messages.find(i.id, 's1-out'))?.status).to.equal('read');
      expect(await store.messages.find(i.id, 'unknown')).to.equal(undefined);
    });

    const emitted = (instanceId: string, messageId: string, at: number, owed?: string) =>
      store.deliveries.insertOnce([], 0, { instanceId, messageId, at, ...(owed !== undefined ? { owed } : {}) });

    it('notes when a message was emitted, once, and keeps it across a later save', async () => {
      const { i } = await seeded();
      await store.messages.save({ ...message(i.id, 'e1', 1000), status: 'received' });
      expect((await store.messages.find(i.id, 'e1'))?.emittedAt).to.equal(undefined);
      expect(await emitted(i.id, 'e1', 5000)).to.equal(true);
      expect(await emitted(i.id, 'e1', 6000)).to.equal(false);
      // A message the history lacks is queued, unmarked.
      expect(await emitted(i.id, 'unknown', 6000)).to.equal(true);
      expect((await store.messages.find(i.id, 'e1'))?.emittedAt).to.equal(5000);
      await store.messages.save({ ...message(i.id, 'e1', 1000), text: 'edited', status: 'received' });
      const after = await store.messages.find(i.id, 'e1');
      expect([after?.text, after?.emittedAt]).to.deep.equal(['edited', 5000]);
      expect(await store.messages.find(i.id, 'unknown')).to.equal(undefined);
    });

    it("queues a message's event with its mark, and never a second event of it", async () => {
      const { i } = await seeded();
      await store.messages.save({ ...message(i.id, 'q1', 1000), status: 'received' });
      const row = (n: number) => ({
        id: `q1-${n}-${randomUUID()}`,
        instanceId: i.id,
        payload: JSON.stringify({ n }),
        attempts: 0,
        lastError: undefined,
        createdAt: new Date().toISOString(),
        updatedAt: new Date().toISOString(),
      });
      const [first, second] = [row(1), row(2)];
      expect(await store.deliveries.insertOnce([first], 0, { instanceId: i.id, messageId: 'q1', at: 5000 })).to.equal(
        true,
      );
      expect(await store.deliveries.insertOnce([second], 0, { instanceId: i.id, messageId: 'q1', at: 6000 })).to.equal(
        false,
      );
      const taken = await store.deliveries.take(0, 100, 1000);
      expect(taken.filter((r) => r.instanceId === i.id).map((r) => r.id)).to.deep.equal([first.id]);
      expect((await store.messages.find(i.id, 'q1'))?.emittedAt).to.equal(5000);
      await store.deliveries.settle(taken.map((r) => ({ id: r.id, outcome: 'completed' as const })));
    });

    it('records a message owed to the extensions only if no event left before, until its debt is settled', async () => {
      const { i } = await seeded();
      for (const [id, t] of [
        ['o1', 2000],
        ['o2', 1000],
        ['o3', 3000],
      ] as const) {
        await store.messages.save({ ...message(i.id, id, t), status: 'received' });
      }
      expect(await emitted(i.id, 'o1', 5000, '{"id":"o1"}')).to.equal(true);
      expect(await emitted(i.id, 'o2', 5000, '{"id":"o2"}')).to.equal(true);
      // An event left already (the owner's own): no debt is recorded.
      expect(await emitted(i.id, 'o3', 4000)).to.equal(true);
      expect(await emitted(i.id, 'o3', 5000, '{"id":"o3"}')).to.equal(false);
      expect(await store.messages.owed(i.id, 10)).to.deep.equal([
        { id: 'o2', owed: '{"id":"o2"}' },
        { id: 'o1', owed: '{"id":"o1"}' },
      ]);
      expect(await store.messages.owed(i.id, 1)).to.have.length(1);
      expect(await store.messages.isOwed(i.id, 'o2')).to.equal(true);
      expect(await store.messages.settleOwed(i.id, 'o2')).to.equal(true);
      expect(await store.messages.settleOwed(i.id, 'o2')).to.equal(false);
      expect(await store.messages.isOwed(i.id, 'o2')).to.equal(false);
      expect(await store.messages.isOwed(i.id, 'o3')).to.equal(false);
      // The owner's own copy, once a lost owner queued it, queues nothing and leaves the debt until it is settled.
      expect(await emitted(i.id, 'o1', 9000)).to.equal(false);
      expect(await store.messages.owed(i.id, 10)).to.deep.equal([{ id: 'o1', owed: '{"id":"o1"}' }]);
      expect((await store.messages.find(i.id, 'o1'))?.emittedAt).to.equal(5000);
      expect(await store.messages.settleOwed(i.id, 'o1')).to.equal(true);
    });

    it('lists chats by their newest message with unread counts, pages them, and clears one chat', async () => {
      const { i } = await seeded();
      const [a, b, c] = ['551100000001@s.whatsapp.net', '551100000002@s.whatsapp.net', '120363000000000009@g.us'];
      await store.messages.save({ ...message(i.id, 'a1', 1000, a), status: 'received' });
      await store.messages.save({ ...message(i.id, 'a2', 3000, a), status: 'received' });
      await store.messages.save({ ...message(i.id, 'a3-out', 2000, a), status: 'sent' });
      await store.messages.save({ ...message(i.id, 'b1', 5000, b), status: 'read' });
      await store.messages.save({ ...message(i.id, 'c1', 3000, c), status: 'received' });
      expect(await store.messages.chats(i.id, { limit: 10 })).to.deep.equal([
        { chatJid: b, lastMessageAt: 5000, unread: 0 },
        { chatJid: a, lastMessageAt: 3000, unread: 2 },
        { chatJid: c, lastMessageAt: 3000, unread: 1 },
      ]);
      const [first, second] = await store.messages.chats(i.id, { limit: 2 });
      expect(await store.messages.chats(i.id, { limit: 2, before: second! })).to.deep.equal([
        { chatJid: c, lastMessageAt: 3000, unread: 1 },
      ]);
      expect(first!.chatJid).to.equal(b);
      expect(await store.messages.clearChat(i.id, a)).to.equal(3);
      expect((await store.messages.chats(i.id, { limit: 10 })).map((x) => x.chatJid)).to.deep.equal([b, c]);
      expect(await store.messages.clearChat(i.id, a)).to.equal(0);
    });

    it("keeps a sent message's source label when a later save carries none", async () => {
      const { i } = await seeded();
      await store.messages.save({ ...message(i.id, 'lbl-out', 1000), source: 'crm-7' });
      await store.messages.save(message(i.id, 'lbl-out', 1000));
      expect((await store.messages.find(i.id, 'lbl-out'))?.source).to.equal('crm-7');
      await store.messages.save(message(i.id, 'plain-out', 1000));
      expect(await store.messages.find(i.id, 'plain-out')).to.not.have.property('source');
    });

    it('saves by (instance, id), finds, and replaces on a second save', async () => {
      const { i } = await seeded();
      const first = { ...message(i.id, 'm1', 1000), media: { kind: 'image', mimetype: 'image/jpeg', size: 42 } };
      await store.messages.save(first);
      await store.messages.save(first);
      expect(await store.messages.find(i.id, 'm1')).to.deep.equal(first);
      await store.messages.save({ ...first, text: 'edited', media: undefined });
      expect(await store.messages.find(i.id, 'm1')).to.deep.equal({ ...first, text: 'edited', media: undefined });
      expect(await store.messages.find(i.id, 'missing')).to.equal(undefined);
      expect(await store.messages.find(randomUUID(), 'm1')).to.equal(undefined);
    });

    it('lists newest first, by chat, and pages with a (time, id) cursor without losing same-millisecond messages', async () => {
      const { i } = await seeded();
      const other = 'group-1@g.us';
      for (const m of [
        message(i.id, 'a', 1000),
        message(i.id, 'b', 2000),
        message(i.id, 'c', 2000),
        message(i.id, 'd', 3000),
        message(i.id, 'g', 2500, other),
      ]) {
        await store.messages.save(m);
      }
      const ids = (list: MessageRecord[]) => list.map((m) => m.id);
      expect(ids(await store.messages.list(i.id, { limit: 10 }))).to.deep.equal(['d', 'g', 'c', 'b', 'a']);
      const chat = '5511900000001@s.whatsapp.net';
      const page1 = await store.messages.list(i.id, { chatJid: chat, limit: 2 });
      expect(ids(page1)).to.deep.equal(['d', 'c']);
      const last = page1[1]!;
      const page2 = await store.messages.list(i.id, {
        chatJid: chat,
        limit: 2,
        before: { timestamp: last.timestamp, id: last.id },
      });
      expect(ids(page2)).to.deep.equal(['b', 'a']);
      expect(
        ids(await store.messages.list(i.id, { chatJid: chat, limit: 10, before: { timestamp: 2000 } })),
      ).to.deep.equal(['a']);
      expect(ids(await store.messages.list(i.id, { chatJid: other, limit: 10 }))).to.deep.equal(['g']);
    });

    it('deletes one message, prunes by age across instances, and goes with its instance', async () => {
      const { a, i } = await seeded();
      const j = instance(a.id);
      await store.instances.create(j, [], 10);
      await store.messages.save(message(i.id, 'old', 1000));
      await store.messages.save(message(i.id, 'new', 5000));
      await store.messages.save(message(j.id, 'old-j', 1500));
      expect(await store.messages.delete(i.id, 'new')).to.equal(true);
      expect(await store.messages.delete(i.id, 'new')).to.equal(false);
      expect(await store.messages.prune(2000)).to.equal(2);
      expect(await store.messages.list(i.id, { limit: 10 })).to.deep.equal([]);
      await store.messages.save(message(j.id, 'kept', 9000));
      await store.instances.delete(j.id);
      expect(await store.messages.find(j.id, 'kept')).to.equal(undefined);
    });
  });

  describe('media blobs', () => {
    it('keeps a file until it expires, replaces it, prunes expired ones, and forgets them with the instance', async () => {
      const a = account();
      await store.accounts.create(a);
      const i = instance(a.id);
      await store.instances.create(i, [], 10);
      const t = Date.now();
      await store.mediaBlobs.put({
        instanceId: i.id,
        messageId: 'm1',
        data: Buffer.from('first'),
        expiresAt: t + 60_000,
      });
      await store.mediaBlobs.put({
        instanceId: i.id,
        messageId: 'm1',
        data: Buffer.from('second'),
        expiresAt: t + 60_000,
      });
      await store.mediaBlobs.put({ instanceId: i.id, messageId: 'm2', data: Buffer.from('old'), expiresAt: t - 1 });
      expect((await store.mediaBlobs.get(i.id, 'm1', t))?.toString()).to.equal('second');
      expect(await store.mediaBlobs.get(i.id, 'm1', t + 60_000), 'expired at its time').to.equal(undefined);
      expect(await store.mediaBlobs.get(i.id, 'm2', t)).to.equal(undefined);
      expect(await store.mediaBlobs.get(i.id, 'unknown', t)).to.equal(undefined);
      expect(await store.mediaBlobs.prune(t)).to.be.at.least(1);
      expect((await store.mediaBlobs.get(i.id, 'm1', t))?.toString()).to.equal('second');
      await store.instances.delete(i.id);
      expect(await store.mediaBlobs.get(i.id, 'm1', t)).to.equal(undefined);
    });

    it('round-trips a file larger than one storage document', async () => {
      const a = account();
      await store.accounts.create(a);
      const i = instance(a.id);
      await store.instances.create(i, [], 10);
      const big = Buffer.alloc(9 * 1024 * 1024 + 7, 0x5a);
      big[big.length - 1] = 1;
      await store.mediaBlobs.put({ instanceId: i.id, messageId: 'big', data: big, expiresAt: Date.now() + 60_000 });
      expect((await store.mediaBlobs.get(i.id, 'big', Date.now()))?.equals(big)).to.equal(true);
    });
  });

  describe('account webhooks', () => {
    it('saves, reads and replaces an account webhook (creation time kept)', async () => {
      const a = account();
      await store.accounts.create(a);
      expect(await store.accountWebhooks.get(a.id)).to.equal(undefined);
      const w = {
        accountId: a.id,
        url: 'https://h.example/a',
        events: ['enterprise.trial.started'],
        enabled: true,
        secretSealed: 'v1:s',
        createdAt: now(),
        updatedAt: now(),
      };
      await store.accountWebhooks.save(w);
      expect(await store.accountWebhooks.get(a.id)).to.deep.equal(w);
      await store.accountWebhooks.save({
        ...w,
        events: [],
        enabled: false,
        secretSealed: 'v1:t',
        createdAt: 'later',
        updatedAt: 'later',
      });
      expect(await store.accountWebhooks.get(a.id)).to.deep.equal({
        ...w,
        events: [],
        enabled: false,
        secretSealed: 'v1:t',
        updatedAt: 'later',
      });
    });
  });

  describe('billing ledger', () => {
    const entry = (key: string, accountId = 'acc-1') => ({
      key,
      accountId,
      event: 'enterprise.trial.started',
      description: 'd',
      data: '{}',
      createdAt: now(),
      sentAt: undefined,
    });

    it('records a key once, whoever asks', async () => {
      const e = entry(`k-${randomUUID()}`);
      const results = await Promise.all([store.billingLedger.record([e], 0), store.billingLedger.record([e], 0)]);
      expect(results.filter((keys) => keys.has(e.key))).to.have.length(1);
      expect(await store.billingLedger.list('acc-1')).to.deep.equal([e]);
    });

    it('records many in one call, answering the keys it inserted, and leaves the existing ones as they were', async () => {
      const account = `acc-${randomUUID()}`;
      const old = { ...entry(`k-${randomUUID()}`, account), description: 'first' };
      expect(await store.billingLedger.record([old], 0)).to.deep.equal(new Set([old.key]));
      const fresh = Array.from({ length: 700 }, (_, i) => entry(`k-${i}-${randomUUID()}`, account));
      const again = { ...old, description: 'second' };
      const inserted = await store.billingLedger.record([fresh[0]!, again, ...fresh.slice(1)], 0);
      expect(inserted).to.deep.equal(new Set(fresh.map((e) => e.key)));
      const listed = await store.billingLedger.list(account);
      expect(listed).to.have.length(701);
      expect(listed.find((e) => e.key === old.key)?.description).to.equal('first');
      expect(await store.billingLedger.record([], 0)).to.deep.equal(new Set());
      await store.billingLedger.markSent([], 'never');
      await store.billingLedger.markSent(
        fresh.slice(0, 300).map((e) => e.key),
        'sent-at',
      );
      const sent = (await store.billingLedger.list(account)).filter((e) => e.sentAt === 'sent-at');
      expect(sent.map((e) => e.key).sort()).to.deep.equal(
        fresh
          .slice(0, 300)
          .map((e) => e.key)
          .sort(),
      );
    });

    it('hands out unsent entries only after their lease, once each, until marked sent', async () => {
      const t = Date.now();
      await store.billingLedger.record([entry('leased')], t + 10_000);
      await store.billingLedger.record([entry('free')], 0);
      const first = await store.billingLedger.takeUnsent(t, 10, 5000);
      expect(first.map((e) => e.key)).to.deep.equal(['free']);
      expect(await store.billingLedger.takeUnsent(t, 10, 5000)).to.deep.equal([]);
      expect((await store.billingLedger.takeUnsent(t + 20_000, 10, 5000)).map((e) => e.key).sort()).to.deep.equal([
        'free',
        'leased',
      ]);
      await store.billingLedger.markSent(['free'], 'sent-at');
      expect((await store.billingLedger.takeUnsent(t + 60_000, 10, 5000)).map((e) => e.key)).to.deep.equal(['leased']);
      expect((await store.billingLedger.list('acc-1')).find((e) => e.key === 'free')?.sentAt).to.equal('sent-at');
    });
  });

  describe('chatbots', () => {
    let seq = 0;
    function bot(instanceId: string, fields: Partial<ChatbotBotRecord> = {}): ChatbotBotRecord {
      const at = new Date(Date.UTC(2026, 0, 1, 0, 0, ++seq)).toISOString();
      return {
        instanceId,
        botId: randomUUID(),
        enabled: true,
        label: 'bot',
        url: 'https://viewer.example/flow',
        triggerType: 'all',
        triggerOperator: undefined,
        triggerValue: undefined,
        expireMinutes: 0.5,
        expireMessage: '',
        keywordFinish: '',
        finishMessage: '',
        typingDelayMs: 0,
        stopBotFromMe: false,
        debounceSeconds: 0,
        ignoreGroups: true,
        noStartFromMe: false,
        keepOpen: false,
        fallback: false,
        createdAt: at,
        updatedAt: at,
        ...fields,
      };
    }
    const keyword = (operator: ChatbotBotRecord['triggerOperator'], value: string): Partial<ChatbotBotRecord> => ({
      triggerType: 'keyword',
      triggerOperator: operator,
      triggerValue: value,
    });

    it('inserts, lists (oldest first), reads, replaces and deletes bots', async () => {
      const { i } = await seeded();
      const first = bot(i.id);
      const second = bot(i.id, keyword('equals', 'menu'));
      await store.chatbots.insertBot(second);
      await store.chatbots.insertBot({ ...first, createdAt: '2025-01-01T00:00:00.000Z' });
      expect((await store.chatbots.listBots(i.id)).map((b) => b.botId)).to.deep.equal([first.botId, second.botId]);
      expect(await store.chatbots.getBot(i.id, second.botId)).to.deep.equal(second);
      expect(await store.chatbots.getBot(i.id, randomUUID())).to.equal(undefined);
      expect(await store.chatbots.updateBot({ ...second, label: 'renamed' })).to.equal(true);
      expect((await store.chatbots.getBot(i.id, second.botId))?.label).to.equal('renamed');
      expect(await store.chatbots.updateBot(bot(i.id))).to.equal(false);
      expect(await store.chatbots.deleteBot(i.id, second.botId)).to.equal(true);
      expect(await store.chatbots.deleteBot(i.id, second.botId)).to.equal(false);
      expect(await store.chatbots.deleteAllBots(i.id)).to.equal(1);
      expect(await store.chatbots.listBots(i.id)).to.deep.equal([]);
    });

    it('refuses a second enabled catch-all bot, but not a disabled one or one of another instance', async () => {
      const { a, i } = await seeded();
      const other = instance(a.id);
      await store.instances.create(other, [], a.instanceQuota);
      await store.chatbots.insertBot(bot(i.id));
      expect(await store.chatbots.insertBot(bot(i.id)).catch((e: unknown) => e)).to.be.instanceOf(ConflictError);
      const disabled = bot(i.id, { enabled: false });
      await store.chatbots.insertBot(disabled);
      await store.chatbots.insertBot(bot(i.id, { enabled: false }));
      await store.chatbots.insertBot(bot(other.id));
      expect(await store.chatbots.updateBot({ ...disabled, enabled: true }).catch((e: unknown) => e)).to.be.instanceOf(
        ConflictError,
      );
      expect((await store.chatbots.getBot(i.id, disabled.botId))?.enabled).to.equal(false);
    });

    it('refuses two keyword bots with the same operator and value (case-insensitive except regex)', async () => {
      const { i } = await seeded();
      await store.chatbots.insertBot(bot(i.id, keyword('equals', 'Menu')));
      expect(
        await store.chatbots.insertBot(bot(i.id, keyword('equals', ' menu'))).catch((e: unknown) => e),
      ).to.be.instanceOf(ConflictError);
      await store.chatbots.insertBot(bot(i.id, keyword('contains', 'menu')));
      await store.chatbots.insertBot(bot(i.id, keyword('regex', '^A')));
      await store.chatbots.insertBot(bot(i.id, keyword('regex', '^a')));
      const moved = bot(i.id, keyword('startsWith', 'x'));
      await store.chatbots.insertBot(moved);
      expect(
        await store.chatbots.updateBot({ ...moved, ...keyword('contains', 'MENU') }).catch((e: unknown) => e),
      ).to.be.instanceOf(ConflictError);
      expect(await store.chatbots.listBots(i.id)).to.have.length(5);
    });

    it('saves, replaces and deletes the integration link; deleting the instance removes bots and link', async () => {
      const { i } = await seeded();
      expect(await store.chatbots.getLink(i.id)).to.equal(undefined);
      const link = {
        instanceId: i.id,
        status: 'active' as const,
        lastError: undefined,
        fallbackBotId: undefined,
        updatedAt: now(),
      };
      expect(await store.chatbots.saveLink(link, undefined)).to.equal(true);
      expect(await store.chatbots.getLink(i.id)).to.deep.equal({ ...link, version: 1 });
      const failed = { ...link, status: 'error' as const, lastError: 'HTTP 500', fallbackBotId: randomUUID() };
      expect(await store.chatbots.saveLink(failed, 1)).to.equal(true);
      expect(await store.chatbots.getLink(i.id)).to.deep.equal({ ...failed, version: 2 });
      expect(await store.chatbots.deleteLink(i.id)).to.equal(true);
      expect(await store.chatbots.deleteLink(i.id)).to.equal(false);
      expect(await store.chatbots.saveLink(link, undefined)).to.equal(true);
      await store.chatbots.insertBot(bot(i.id));
      await store.instances.delete(i.id);
      expect(await store.chatbots.listBots(i.id)).to.deep.equal([]);
      expect(await store.chatbots.getLink(i.id)).to.equal(undefined);
    });
  });

  describe('conditional writes (a stale reader or a former owner cannot undo a newer write)', () => {
    const link = (instanceId: string, lastError?: string) => ({
      instanceId,
      status: 'error' as const,
      lastError,
      fallbackBotId: undefined,
      updatedAt: now(),
    });

    it('saves the chatbot link only over the version it read, and never brings a deleted link back', async () => {
      const { i } = await seeded();
      expect(await store.chatbots.saveLink(link(i.id, 'first'), undefined)).to.equal(true);
      // A second creator lost the race: the link exists now.
      expect(await store.chatbots.saveLink(link(i.id, 'second'), undefined)).to.equal(false);
      const read = (await store.chatbots.getLink(i.id))!;
      expect(await store.chatbots.saveLink(link(i.id, 'newer'), read.version)).to.equal(true);
      // A writer that read before 'newer' compares an old version and changes nothing.
      expect(await store.chatbots.saveLink(link(i.id, 'stale'), read.version)).to.equal(false);
      expect((await store.chatbots.getLink(i.id))!.lastError).to.equal('newer');
      const current = (await store.chatbots.getLink(i.id))!;
      await store.chatbots.deleteLink(i.id);
      expect(await store.chatbots.saveLink(link(i.id, 'revived'), current.version)).to.equal(false);
      expect(await store.chatbots.getLink(i.id)).to.equal(undefined);
    });

    it('lets only one of many concurrent savers of one version win', async () => {
      const { i } = await seeded();
      await store.chatbots.saveLink(link(i.id, 'base'), undefined);
      const { version } = (await store.chatbots.getLink(i.id))!;
      const results = await Promise.all(
        Array.from({ length: 8 }, (_, k) => store.chatbots.saveLink(link(i.id, `w${k}`), version)),
      );
      expect(results.filter(Boolean)).to.have.length(1);
      expect((await store.chatbots.getLink(i.id))!.version).to.equal(version + 1);
    });

    it('writes an owner-kept config block only under the current epoch, checked in the same operation', async () => {
      const { i } = await seeded();
      const e1 = await store.instances.claim(i.id);
      const block = (status: 'active' | 'error') => ({ ...HELPDESK_BLOCK, status });
      expect(await store.instances.updateConfigBlock(i.id, 'helpdesk', block('active'), e1)).to.equal(true);
      const e2 = await store.instances.claim(i.id);
      await store.instances.updateConfigBlock(i.id, 'helpdesk', block('error'), e2);
      const stale = await store.instances
        .updateConfigBlock(i.id, 'helpdesk', block('active'), e1)
        .catch((e: unknown) => e);
      expect(stale).to.be.instanceOf(FencedError);
      const removal = await store.instances.updateConfigBlock(i.id, 'helpdesk', undefined, e1).catch((e: unknown) => e);
      expect(removal).to.be.instanceOf(FencedError);
      expect((await store.instances.findById(i.id))!.config.helpdesk?.status).to.equal('error');
      await store.instances.delete(i.id);
      expect(await store.instances.updateConfigBlock(i.id, 'helpdesk', block('active'), e2)).to.equal(false);
    });
  });

  it('answers ping', async () => {
    await store.ping();
  });
}
