import { randomUUID } from 'node:crypto';
import { expect } from 'chai';
import { CachingAuthenticator } from '../../src/http/auth.js';
import { hashToken } from '../../src/security/tokens.js';
import type { AccountRecord, InstanceRecord } from '../../src/store/records.js';
import { SqliteStore } from '../../src/store/sqlite/sqlite-store.js';
import { instanceRecord } from '../helpers/records.js';

describe('CachingAuthenticator: tokens resolved through a small cache that revocations empty', () => {
  let store: SqliteStore;
  let clock: number;
  let auth: CachingAuthenticator;
  let lookups: number;
  let account: AccountRecord;
  let instance: InstanceRecord;
  const ACCOUNT_TOKEN = 'account-token-0000';
  const INSTANCE_TOKEN = 'instance-token-0000';

  beforeEach(async () => {
    store = new SqliteStore(':memory:');
    const now = new Date().toISOString();
    account = {
      id: randomUUID(),
      name: 'acme',
      tokenHash: hashToken(ACCOUNT_TOKEN),
      instanceQuota: 5,
      allowedOrigins: [],
      createdAt: now,
    };
    await store.accounts.create(account);
    instance = instanceRecord(account.id, { name: 'shop', tokenHash: hashToken(INSTANCE_TOKEN) });
    await store.instances.create(instance, [], 5);
    // Counts the token lookups the cache exists to save.
    lookups = 0;
    for (const repo of [store.accounts, store.instances] as { findByTokenHash: (h: string) => Promise<unknown> }[]) {
      const real = repo.findByTokenHash.bind(repo);
      repo.findByTokenHash = (hash: string) => {
        lookups++;
        return real(hash);
      };
    }
    clock = 1_000_000;
    auth = new CachingAuthenticator(store, 'admin-token', 1000, () => clock);
  });

  afterEach(async () => {
    await store.close();
  });

  it('looks a token up once per TTL; an instance token re-reads its instance every time', async () => {
    expect((await auth.resolve(ACCOUNT_TOKEN))?.kind).to.equal('account');
    expect((await auth.resolve(ACCOUNT_TOKEN))?.kind).to.equal('account');
    expect(lookups).to.equal(1);
    const first = await auth.resolve(INSTANCE_TOKEN);
    const second = await auth.resolve(INSTANCE_TOKEN);
    expect(first?.kind).to.equal('instance');
    expect(second?.kind).to.equal('instance');
    expect(lookups).to.equal(1 + 2);
    clock += 1000;
    await auth.resolve(ACCOUNT_TOKEN);
    expect(lookups).to.equal(4);
  });

  it('a rotated or deleted instance token is refused at once, news or not', async () => {
    await auth.resolve(INSTANCE_TOKEN);
    expect(await store.instances.replaceToken(instance.id, hashToken('new-token'), 'v1:new')).to.equal(true);
    expect(await auth.resolve(INSTANCE_TOKEN)).to.equal(undefined);
    expect((await auth.resolve('new-token'))?.kind).to.equal('instance');
    await store.instances.delete(instance.id);
    expect(await auth.resolve('new-token')).to.equal(undefined);
  });

  it("an account's news empties its entries; without news they lapse after the TTL", async () => {
    await auth.resolve(ACCOUNT_TOKEN);
    await auth.resolve(INSTANCE_TOKEN);
    await store.accounts.setDisabled('acme', new Date().toISOString());
    // Lost news: still served from the cache until the TTL passes.
    expect((await auth.resolve(ACCOUNT_TOKEN))?.kind).to.equal('account');
    clock += 1000;
    expect(await auth.resolve(ACCOUNT_TOKEN)).to.equal(undefined);
    expect(await auth.resolve(INSTANCE_TOKEN)).to.equal(undefined);

    await store.accounts.setDisabled('acme', undefined);
    clock += 1000;
    expect((await auth.resolve(INSTANCE_TOKEN))?.kind).to.equal('instance');
    await store.accounts.setDisabled('acme', new Date().toISOString());
    auth.forget({ accountId: account.id });
    expect(await auth.resolve(INSTANCE_TOKEN)).to.equal(undefined);
    expect(await auth.resolve(ACCOUNT_TOKEN)).to.equal(undefined);
  });

  it('the global token is never cached nor accepted from a URL', async () => {
    expect(await auth.resolve('admin-token')).to.deep.equal({ kind: 'global' });
    expect(lookups).to.equal(0);
    // From a URL it is an ordinary token, which no account or instance has.
    expect(await auth.resolve('admin-token', true)).to.equal(undefined);
    expect(lookups).to.equal(2);
  });
});
