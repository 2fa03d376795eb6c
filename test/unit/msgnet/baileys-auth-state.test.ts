import { expect } from 'chai';
import { addTransactionCapability, proto } from '@whiskeysockets/baileys';
import type { KeyPair, SignalDataSet, SignalKeyStore } from '@whiskeysockets/baileys';
import { BaileysAuth, CREDS_KEY, SocketEndedError } from '../../../src/msgnet/baileys/baileys-auth-state.js';
import { socketConfig } from '../../../src/msgnet/baileys/socket-config.js';
import type { SocketConfigInput } from '../../../src/msgnet/baileys/socket-config.js';
import { FencedError, NotOwnerError } from '../../../src/errors.js';
import { MemoryAuthStore } from '../../helpers/baileys/memory-auth-store.js';
import { seedLinkedCreds, silentLog } from '../../helpers/baileys/baileys-harness.js';

/** The config of a socket over `auth`: only what the key transactions read of it matters here. */
const socketInput = (auth: BaileysAuth) =>
  ({ auth, log: silentLog, settings: {}, caches: {}, acks: {}, sent: {} }) as unknown as SocketConfigInput;

const keyPair = (n: number): KeyPair => ({ public: Buffer.alloc(32, n), private: Buffer.alloc(32, n + 1) });

describe('BaileysAuth (Baileys auth state over the fenced AuthStore)', () => {
  it('makes fresh creds with initAuthCreds when none are stored, without writing', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    expect(auth.state.creds.noiseKey.public).to.have.length(32);
    expect(auth.state.creds.registered).to.equal(false);
    expect(auth.registered).to.equal(false);
    expect(store.sets).to.have.length(0);
  });

  it('round-trips creds through the store, Buffers included', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    auth.state.creds.me = { id: '5511999990000:7@s.whatsapp.net', name: 'Me' };
    await auth.saveCreds();
    expect(store.sets).to.have.length(1);
    expect(Object.keys(store.sets[0]!)).to.deep.equal([CREDS_KEY]);

    const again = await BaileysAuth.load(store);
    expect(again.state.creds.me).to.deep.equal({ id: '5511999990000:7@s.whatsapp.net', name: 'Me' });
    expect(Buffer.isBuffer(again.state.creds.noiseKey.private)).to.equal(true);
    expect(
      Buffer.compare(Buffer.from(again.state.creds.noiseKey.private), Buffer.from(auth.state.creds.noiseKey.private)),
    ).to.equal(0);
    expect(again.state.creds.registrationId).to.equal(auth.state.creds.registrationId);
  });

  it('counts as linked only with an account identity (rc14 never sets creds.registered)', async () => {
    const store = new MemoryAuthStore();
    seedLinkedCreds(store);
    expect((await BaileysAuth.load(store)).registered).to.equal(true);
  });

  it('writes one keys.set as ONE AuthStore.set holding every type and id, null deleting', async () => {
    const store = new MemoryAuthStore();
    store.data.set('session:old.0', '"stale"');
    const auth = await BaileysAuth.load(store);
    await auth.state.keys.set({
      session: { 'a.0': Buffer.from('s1'), 'old.0': null },
      'sender-key': { 'g@g.us::u::0': Buffer.from('sk') },
      'lid-mapping': { '5511': '999@lid' },
      'app-state-sync-version': { regular: null },
    });
    expect(store.sets).to.have.length(1);
    expect(Object.keys(store.sets[0]!).sort()).to.deep.equal(
      [
        'app-state-sync-version:regular',
        'lid-mapping:5511',
        'sender-key:g@g.us::u::0',
        'session:a.0',
        'session:old.0',
      ].sort(),
    );
    expect(store.sets[0]!['session:old.0']).to.equal(null);
    expect(store.data.has('session:old.0')).to.equal(false);
  });

  it('commits a Baileys transaction spanning several types as one AuthStore.set', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    const keys = addTransactionCapability(auth.state.keys, silentLog, { maxCommitRetries: 1, delayBetweenTriesMs: 1 });
    await keys.transaction(async () => {
      await keys.set({ session: { 'a.0': Buffer.from('s') } });
      await keys.set({ 'sender-key-memory': { 'g@g.us': { 'u@s.whatsapp.net': true } } });
      await keys.set({ 'identity-key': { 'a.0': Buffer.from('ik') } });
    }, 'test');
    expect(store.sets).to.have.length(1);
    expect(Object.keys(store.sets[0]!).sort()).to.deep.equal([
      'identity-key:a.0',
      'sender-key-memory:g@g.us',
      'session:a.0',
    ]);
  });

  it("an ended socket's key transaction fails at its first commit, as the socket config has it", async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    let commits = 0;
    const state = auth.stateWhile(() => false);
    const counted: SignalKeyStore = {
      get: (type, ids) => state.keys.get(type, ids),
      set: (data: SignalDataSet) => (commits++, state.keys.set(data)),
    };
    const keys = addTransactionCapability(counted, silentLog, socketConfig(socketInput(auth)).transactionOpts!);
    let failure: unknown;
    await keys
      .transaction(async () => keys.set({ session: { 'a.0': Buffer.from('s') } }), 'ended')
      .catch((err: unknown) => (failure = err));
    expect(failure).to.be.instanceOf(SocketEndedError);
    // Baileys' default retried 10 times, 3 s apart, holding the socket's decryption meanwhile.
    expect(commits).to.equal(1);
    expect(store.sets).to.have.length(0);
  });

  it('get returns only the ids that exist, revived', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    await auth.state.keys.set({ session: { 'a.0': Buffer.from('s1') }, 'device-list': { u1: ['0', '3'] } });
    const sessions = await auth.state.keys.get('session', ['a.0', 'missing.0']);
    expect(Object.keys(sessions)).to.deep.equal(['a.0']);
    expect(Buffer.from(sessions['a.0']!).toString()).to.equal('s1');
    expect(await auth.state.keys.get('device-list', ['u1'])).to.deep.equal({ u1: ['0', '3'] });
    expect(await auth.state.keys.get('session', [])).to.deep.equal({});
  });

  it('revives app-state-sync-key as proto AppStateSyncKeyData', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    const keyData = proto.Message.AppStateSyncKeyData.fromObject({ keyData: Buffer.from('kd'), timestamp: 5 });
    await auth.state.keys.set({ 'app-state-sync-key': { AAAA: keyData } });
    const again = await BaileysAuth.load(store);
    const got = await again.state.keys.get('app-state-sync-key', ['AAAA']);
    expect(got.AAAA).to.be.instanceOf(proto.Message.AppStateSyncKeyData);
    expect(Buffer.from(got.AAAA!.keyData!).toString()).to.equal('kd');
  });

  it('stores new pre-keys and the creds describing them in the same transaction', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    auth.state.creds.nextPreKeyId = 31;
    await auth.state.keys.set({ 'pre-key': { '30': keyPair(1) } });
    expect(store.sets).to.have.length(1);
    expect(Object.keys(store.sets[0]!).sort()).to.deep.equal([CREDS_KEY, 'pre-key:30']);
    expect(JSON.parse(store.sets[0]![CREDS_KEY]!).nextPreKeyId).to.equal(31);
    // Consuming (deleting) a pre-key does not rewrite creds.
    await auth.state.keys.set({ 'pre-key': { '30': null } });
    expect(Object.keys(store.sets[1]!)).to.deep.equal(['pre-key:30']);
  });

  it('applies writes in call order even when the store is slow', async () => {
    const store = new MemoryAuthStore();
    store.slow = true;
    const auth = await BaileysAuth.load(store);
    await Promise.all([
      auth.state.keys.set({ session: { 'a.0': Buffer.from('1') } }),
      auth.state.keys.set({ session: { 'a.0': Buffer.from('2') } }),
      auth.state.keys.set({ session: { 'a.0': null } }),
      auth.state.keys.set({ session: { 'a.0': Buffer.from('3') } }),
    ]);
    const got = await auth.state.keys.get('session', ['a.0']);
    expect(Buffer.from(got['a.0']!).toString()).to.equal('3');
  });

  it('coalesces queued creds saves, and a save after a write started still lands', async () => {
    const store = new MemoryAuthStore();
    store.slow = true;
    const auth = await BaileysAuth.load(store);
    auth.state.creds.nextPreKeyId = 1;
    const first = auth.saveCreds();
    auth.state.creds.nextPreKeyId = 2;
    const second = auth.saveCreds();
    auth.state.creds.nextPreKeyId = 3;
    const third = auth.saveCreds();
    await Promise.all([first, second, third]);
    expect(store.sets.length).to.be.at.most(2);
    expect(JSON.parse(store.data.get(CREDS_KEY)!).nextPreKeyId).to.equal(3);
  });

  it('a stale epoch makes keys.set reject with the store error, and later writes fail fast', async () => {
    const store = new MemoryAuthStore();
    let lost: unknown;
    let lostCalls = 0;
    const auth = await BaileysAuth.load(store, {
      onOwnershipLost: (err) => {
        lost = err;
        lostCalls++;
      },
    });
    const fenced = new FencedError('inst-1', 4);
    store.setError = fenced;
    let caught: unknown;
    try {
      await auth.state.keys.set({ session: { 'a.0': Buffer.from('x') } });
    } catch (err) {
      caught = err;
    }
    expect(caught).to.equal(fenced);
    expect(lost).to.equal(fenced);

    store.setError = undefined;
    const before = store.sets.length;
    let second: unknown;
    await auth.saveCreds().catch((err: unknown) => (second = err));
    expect(second).to.equal(fenced);
    expect(store.sets.length).to.equal(before);
    expect(lostCalls).to.equal(1);
  });

  it("treats the actor's NotOwnerError like a stale epoch", async () => {
    const store = new MemoryAuthStore();
    let lost = false;
    const auth = await BaileysAuth.load(store, { onOwnershipLost: () => (lost = true) });
    store.setError = new NotOwnerError('inst-1');
    await auth.saveCreds().catch(() => undefined);
    expect(lost).to.equal(true);
  });

  it('propagates other store errors without latching', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    store.setError = new Error('store down');
    let caught: unknown;
    await Promise.resolve(auth.state.keys.set({ session: { 'a.0': Buffer.from('x') } })).catch(
      (err: unknown) => (caught = err),
    );
    expect((caught as Error).message).to.equal('store down');
    store.setError = undefined;
    await auth.state.keys.set({ session: { 'a.0': Buffer.from('y') } });
    expect(store.data.has('session:a.0')).to.equal(true);
  });

  it('clear forgets the link and drops writes from a socket still winding down', async () => {
    const store = new MemoryAuthStore();
    const auth = await BaileysAuth.load(store);
    await auth.saveCreds();
    await auth.clear();
    expect(store.clears).to.equal(1);
    expect(store.data.size).to.equal(0);
    await auth.state.keys.set({ session: { 'a.0': Buffer.from('late') } });
    await auth.saveCreds();
    expect(store.data.size).to.equal(0);
  });
});
