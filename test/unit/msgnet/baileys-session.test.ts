import { SocketEndedError } from '../../../src/msgnet/baileys/baileys-auth-state.js';
import { expect } from 'chai';
import {
  AppError,
  ERROR_CODES,
  ErrorCode,
  FencedError,
  NotOwnerError,
  NotSupportedError,
  StoreUnavailableError,
} from '../../../src/errors.js';
import { CREDS_KEY } from '../../../src/msgnet/baileys/baileys-auth-state.js';
import type { ProxyAgents } from '../../../src/msgnet/baileys/proxy-agents.js';
import type { ProxySettings } from '../../../src/msgnet/msgnet-driver.js';
import { TEMP_BAN_REASON } from '../../../src/msgnet/msgnet-events.js';
import { OWN_JID, boom } from '../../helpers/baileys/fake-baileys-socket.js';
import { connectedSession, connectionEvents, openSession } from '../../helpers/baileys/baileys-harness.js';
import { settle } from '../../helpers/manual-clock.js';

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (err) {
    return err;
  }
  throw new Error('expected a rejection');
}

describe('BaileysSession: connection lifecycle', () => {
  it('resume without a saved link opens no socket', async () => {
    const h = await openSession();
    await h.session.resume();
    expect(h.factory.sockets).to.have.length(0);
    expect(h.session.state).to.equal('disconnected');
  });

  it('resume with a saved link opens a socket with the stored creds and the right config', async () => {
    const h = await openSession({ linked: true });
    await h.session.resume();
    expect(h.factory.sockets).to.have.length(1);
    const config = h.factory.last.config;
    expect(config.auth.creds.me?.id).to.equal('5511999990000:7@s.whatsapp.net');
    expect(config.markOnlineOnConnect).to.equal(false);
    expect(config.agent).to.equal(undefined);
    expect(config.msgRetryCounterCache).to.not.equal(undefined);
    expect(config.userDevicesCache).to.not.equal(undefined);
    expect(config.callOfferCache).to.not.equal(undefined);
  });

  it('maps connection updates to connection events', async () => {
    const h = await openSession({ linked: true });
    await h.session.resume();
    const sock = h.factory.last;
    sock.connecting();
    sock.open();
    expect(connectionEvents(h.events)).to.deep.equal([
      { type: 'connection', state: 'connecting' },
      {
        type: 'connection',
        state: 'connected',
        numberJid: OWN_JID,
        profileName: 'Me',
        business: { isBusiness: false },
      },
    ]);
    expect(h.session.state).to.equal('connected');
    expect(h.session.numberJid).to.equal(OWN_JID);
  });

  it('a number linked from WhatsApp Business (pair-success platform smba or smbi) connects as a business', async () => {
    const h = await openSession({ linked: true });
    await h.session.resume();
    const sock = h.factory.last;
    sock.authState.creds.platform = 'smbi';
    sock.open();
    expect(connectionEvents(h.events).at(-1)).to.deep.include({ business: { isBusiness: true, name: 'Me' } });
  });

  it('connect({method: qr}) resolves with the first QR and reports it', async () => {
    const h = await openSession();
    const challenge = h.session.connect({ method: 'qr' });
    await settle();
    h.factory.last.connecting();
    h.factory.last.qr('QR-1');
    expect(await challenge).to.deep.equal({ status: 'qr', qrCode: 'QR-1' });
    h.factory.last.qr('QR-2');
    expect(connectionEvents(h.events)).to.deep.equal([
      { type: 'connection', state: 'connecting' },
      { type: 'connection', state: 'qr', qrCode: 'QR-1' },
      { type: 'connection', state: 'qr', qrCode: 'QR-2' },
    ]);
    // A second connect while waiting for a scan returns the current QR from the same socket.
    expect(await h.session.connect({ method: 'qr' })).to.deep.equal({ status: 'qr', qrCode: 'QR-2' });
    expect(h.factory.sockets).to.have.length(1);
  });

  it('connect({method: pairing}) asks for a code only once the socket is up', async () => {
    const h = await openSession();
    const challenge = h.session.connect({ method: 'pairing', phoneNumber: '+55 11 98888-7777' });
    await settle();
    expect(h.factory.last.callsOf('requestPairingCode')).to.have.length(0);
    h.factory.last.qr('QR-1');
    expect(await challenge).to.deep.equal({ status: 'pairing', pairingCode: 'ABCD1234' });
    expect(h.factory.last.callsOf('requestPairingCode')).to.deep.equal([['5511988887777', undefined]]);
  });

  it('connect on a linked, open session answers connected without a new socket', async () => {
    const h = await connectedSession();
    expect(await h.session.connect({ method: 'qr' })).to.deep.equal({ status: 'connected', numberJid: OWN_JID });
    expect(h.factory.sockets).to.have.length(1);
  });

  it('connect on a linked session waits for the connection to open', async () => {
    const h = await openSession({ linked: true });
    const challenge = h.session.connect({ method: 'qr' });
    await settle();
    h.factory.last.open();
    expect(await challenge).to.deep.equal({ status: 'connected', numberJid: OWN_JID });
  });

  it('515 restartRequired: a new socket with the same auth at once, the old one ended first', async () => {
    const h = await openSession();
    const challenge = h.session.connect({ method: 'qr' });
    await settle();
    const first = h.factory.last;
    first.qr('QR-1');
    await challenge;
    first.close(boom(515, 'Stream Errored (restart required)'));
    expect(h.factory.sockets).to.have.length(2);
    expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
    expect(h.factory.last.config.auth.creds).to.equal(first.config.auth.creds);
    expect(connectionEvents(h.events).map((e) => e.state)).to.not.include('disconnected');
    h.factory.last.open();
    expect(h.session.state).to.equal('connected');
  });

  for (const code of [428, 408, 500, 503]) {
    it(`${code}: reports disconnected and reconnects after a backoff`, async () => {
      const h = await connectedSession();
      h.factory.last.close(boom(code, 'Connection Closed'));
      expect(h.session.state).to.equal('disconnected');
      expect(h.factory.sockets).to.have.length(1);
      // The harness's first delay: 10 ms doubling, half of it random (here 0).
      await h.clock.advance(4);
      expect(h.factory.sockets).to.have.length(1);
      await h.clock.advance(1);
      expect(h.factory.sockets).to.have.length(2);
      expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
      h.factory.last.open();
      expect(connectionEvents(h.events).map((e) => e.state)).to.deep.equal(['disconnected', 'connected']);
      await h.session.close();
    });
  }

  it('402 (a temporary ban): reports disconnected with the ban as the reason, and retries after a backoff', async () => {
    const h = await connectedSession();
    h.factory.last.close(boom(402, 'Connection Failure'));
    expect(connectionEvents(h.events).at(-1)).to.include({ state: 'disconnected', reason: TEMP_BAN_REASON });
    await h.clock.advance(5);
    expect(h.factory.sockets).to.have.length(2);
    await h.session.close();
  });

  it('backoff grows between failed attempts and resets after an open', async () => {
    const h = await connectedSession({ driver: { backoff: { baseMs: 40, maxMs: 10_000 }, random: () => 1 } });
    /** How long after a close the next socket is made. */
    const delayOf = async (sockets: number) => {
      h.factory.last.close(boom(428));
      let waited = 0;
      while (h.factory.sockets.length < sockets && waited < 1000) {
        await h.clock.advance(1);
        waited++;
      }
      return waited;
    };
    expect(await delayOf(2)).to.equal(40);
    expect(await delayOf(3), 'the second delay doubles').to.equal(80);
    h.factory.last.open();
    // Without the reset this third delay would be 160 ms.
    expect(await delayOf(4), 'back to the first delay').to.equal(40);
    await h.session.close();
  });

  it('440 connectionReplaced on a node that no longer owns the instance: goes quiet, never reconnects', async () => {
    const h = await connectedSession({ stillOwner: async () => false });
    h.factory.last.close(boom(440, 'Stream Errored (conflict)'));
    await h.clock.advance(60);
    await settle();
    expect(h.factory.sockets).to.have.length(1);
    expect(h.factory.last.ended).to.equal(true);
    expect(connectionEvents(h.events)).to.deep.equal([
      { type: 'connection', state: 'disconnected', reason: 'replaced by another session' },
    ]);
    expect(h.store.clears).to.equal(0);
  });

  it('440 connectionReplaced on the owner (a stale owner logged in): takes the connection back', async () => {
    const h = await connectedSession({ stillOwner: async () => true });
    h.factory.last.close(boom(440, 'Stream Errored (conflict)'));
    await h.clock.advance(1);
    await settle();
    expect(h.factory.sockets, 'a new socket on the same link').to.have.length(2);
    expect(h.store.clears).to.equal(0);
  });

  it('a backoff reconnect asks the owner check first: a node that lost the instance stays quiet', async () => {
    let owner = true;
    const h = await connectedSession({ stillOwner: async () => owner });
    owner = false;
    h.factory.last.close(boom(428));
    await h.clock.advance(100);
    await settle();
    expect(h.factory.sockets, 'no reconnect').to.have.length(1);
  });

  for (const [code, reason] of [
    [401, 'logged out'],
    [411, 'multi-device mismatch'],
  ] as const) {
    it(`${code}: forgets the link and reports loggedout`, async () => {
      const h = await connectedSession();
      h.factory.last.close(boom(code));
      await h.clock.advance(60);
      expect(h.store.clears).to.equal(1);
      expect(h.store.data.has(CREDS_KEY)).to.equal(false);
      expect(h.factory.sockets).to.have.length(1);
      expect(connectionEvents(h.events)).to.deep.equal([{ type: 'connection', state: 'loggedout', reason }]);
      expect(h.session.numberJid).to.equal(undefined);
      // The next link starts from fresh creds.
      const challenge = h.session.connect({ method: 'qr' });
      await settle();
      expect(h.factory.last.config.auth.creds.me).to.equal(undefined);
      h.factory.last.qr('QR-NEW');
      expect(await challenge).to.deep.equal({ status: 'qr', qrCode: 'QR-NEW' });
    });
  }

  it('403 forbidden: loggedout without a reconnect loop', async () => {
    const h = await connectedSession();
    h.factory.last.close(boom(403));
    await h.clock.advance(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(h.session.state).to.equal('loggedout');
  });

  it('an unreachable network fails a waiting connect at once with the cause, and keeps retrying', async () => {
    const h = await openSession({ driver: { linkTimeoutMs: 30_000, backoff: { baseMs: 20, maxMs: 40 } } });
    const challenge = h.session.connect({ method: 'qr' });
    await settle();
    const dns = Object.assign(boom(408, 'WebSocket Error (getaddrinfo ENOTFOUND web.whatsapp.com)'), {
      data: new Error('getaddrinfo ENOTFOUND web.whatsapp.com'),
    });
    h.factory.last.close(dns);
    // At once: the clock has not moved towards the link's 30 s deadline.
    const err = await rejection(challenge);
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal(ErrorCode.NetworkUnreachable);
    expect((err as AppError).message).to.equal('could not reach WhatsApp: getaddrinfo ENOTFOUND web.whatsapp.com');
    expect(connectionEvents(h.events).at(-1)).to.include({
      state: 'disconnected',
      reason: 'network unreachable',
      error: 'getaddrinfo ENOTFOUND web.whatsapp.com',
    });
    // The background retry goes on (after 20 ms, half of it random, here 0); once the network answers, a QR
    // comes as usual.
    await h.clock.advance(10);
    expect(h.factory.sockets).to.have.length(2);
    h.factory.last.qr('QR-AFTER-OUTAGE');
    expect(await h.session.connect({ method: 'qr' })).to.deep.equal({ status: 'qr', qrCode: 'QR-AFTER-OUTAGE' });
    await h.session.close();
  });

  it('408 "QR refs attempts ended": stops and fails the pending link', async () => {
    const h = await openSession({ driver: { linkTimeoutMs: 5_000 } });
    const challenge = h.session.connect({ method: 'pairing', phoneNumber: '5511988887777' });
    await settle();
    h.factory.last.close(boom(408, 'QR refs attempts ended'));
    const err = await rejection(challenge);
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal(ErrorCode.NotConnected);
    await h.clock.advance(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(connectionEvents(h.events).at(-1)).to.deep.equal({
      type: 'connection',
      state: 'disconnected',
      reason: 'qr code expired',
    });
  });

  it('close() ends the socket, cancels a pending reconnect and emits nothing afterwards', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.close(boom(428));
    h.events.length = 0;
    await h.session.close();
    await h.clock.advance(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(sock.ended).to.equal(true);
    sock.open();
    sock.emit('messages.upsert', {
      type: 'notify',
      messages: [{ key: { remoteJid: 'x@s.whatsapp.net', id: 'M', fromMe: false }, message: { conversation: 'hi' } }],
    });
    expect(h.events).to.deep.equal([]);
  });

  it('close() on an open session ends the socket and ignores its final close update', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    await h.session.close();
    expect(sock.callsOf('end')).to.deep.equal([[undefined]]);
    sock.close(undefined);
    await h.clock.advance(30);
    expect(h.factory.sockets).to.have.length(1);
    expect(h.events).to.deep.equal([]);
  });

  it('reconnect() replaces the socket with the same auth', async () => {
    const h = await connectedSession();
    const first = h.factory.last;
    await h.session.reconnect();
    expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
    expect(h.factory.last.config.auth.creds).to.equal(first.config.auth.creds);
    // The ended socket still decrypting what it had queued: its key changes are not stored.
    const stale = await Promise.resolve()
      .then(() => first.config.auth.keys.set({ session: { 'x.0': new Uint8Array([1]) } }))
      .catch((e: unknown) => e);
    expect(stale).to.be.instanceOf(SocketEndedError);
    await h.factory.last.config.auth.keys.set({ session: { 'x.0': new Uint8Array([1]) } });
  });

  it('logout() unlinks, forgets the link and reports loggedout once', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    await h.session.logout();
    expect(sock.callsOf('logout')).to.have.length(1);
    expect(sock.ended).to.equal(true);
    expect(h.store.clears).to.equal(1);
    // The 401 close that follows a logout is not handled twice.
    sock.close(boom(401));
    await h.clock.advance(20);
    expect(h.store.clears).to.equal(1);
    expect(connectionEvents(h.events)).to.deep.equal([
      { type: 'connection', state: 'loggedout', reason: 'logged out' },
    ]);
    expect(h.session.state).to.equal('loggedout');
  });

  it('persists creds on every creds.update', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    sock.config.auth.creds.me = { id: '5511999990000:7@s.whatsapp.net', name: 'New Name' };
    sock.emit('creds.update', { me: sock.config.auth.creds.me });
    await settle();
    expect(JSON.parse(h.store.data.get(CREDS_KEY)!).me.name).to.equal('New Name');
  });

  it('stops all side effects when the store refuses a write (stale epoch)', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    h.store.setError = new FencedError('inst-1', 3);
    sock.emit('creds.update', {});
    await settle();
    expect(sock.ended).to.equal(true);
    sock.close(boom(428));
    await h.clock.advance(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(await rejection(h.session.messages.sendText('5511', 'hi'))).to.be.instanceOf(AppError);
  });

  it('a write the store cannot take ends the socket before Baileys answers the network, then reconnects', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    h.store.setError = new StoreUnavailableError({ cause: new Error('database is locked') });
    sock.emit('creds.update', {});
    await settle();
    // Ended unanswered: a message whose keys could not be stored comes again at the next login.
    expect(sock.ended).to.equal(true);
    expect(h.session.state).to.equal('disconnected');
    h.store.setError = undefined;
    await h.clock.advance(10);
    expect(h.factory.sockets).to.have.length(2);
    h.factory.last.open();
    expect(h.session.state).to.equal('connected');
    await h.session.close();
  });

  it('hands Baileys the owner check to run before every frame it writes', async () => {
    let mayAct = true;
    const h = await openSession({
      linked: true,
      assertMayAct: () => {
        if (!mayAct) throw new NotOwnerError('inst-1');
      },
    });
    await h.session.resume();
    const beforeWrite = h.factory.last.config.beforeWrite!;
    expect(() => beforeWrite()).to.not.throw();
    mayAct = false;
    expect(() => beforeWrite()).to.throw(NotOwnerError);
    await h.session.close();
  });

  it('refuses calls while not connected', async () => {
    const h = await openSession();
    const err = await rejection(h.session.messages.sendText('5511988887777', 'hi'));
    expect((err as AppError).code).to.equal(ErrorCode.NotConnected);
  });

  it('offerCall is refused: Baileys has no upstream API for it', async () => {
    const h = await connectedSession();
    const err = await rejection(h.session.calls.offer('5511988887777', 8));
    expect((err as Error).message).to.equal('Ring-and-drop calls are not supported by the baileys driver');
    expect([...h.factory.last.calls.keys()]).to.deep.equal([]);
  });

  it('an audio call is not supported (501): WhatsApp Web places no voice call, and nothing is sent', async () => {
    const h = await connectedSession();
    const audio = { data: Buffer.from('OggS'), mimetype: 'audio/ogg; codecs=opus', seconds: 1 };
    const err = await rejection(h.session.calls.audioCall('5511988887777', audio));
    expect(err).to.be.instanceOf(NotSupportedError);
    expect(ERROR_CODES[(err as NotSupportedError).code].status).to.equal(501);
    expect((err as Error).message).to.match(/^Audio calls are not supported by the baileys driver/);
    expect([...h.factory.last.calls.keys()]).to.deep.equal([]);
  });
});

describe('BaileysSession: settings and socket options', () => {
  it('disableHistorySync true: syncFullHistory false and history sets dropped', async () => {
    const h = await connectedSession({ settings: { disableHistorySync: true } });
    expect(h.factory.last.config.syncFullHistory).to.equal(false);
    h.factory.last.emit('messaging-history.set', {
      chats: [],
      contacts: [],
      messages: [
        { key: { remoteJid: '5511@s.whatsapp.net', id: 'H1', fromMe: false }, message: { conversation: 'old' } },
      ],
    });
    expect(h.events).to.deep.equal([]);
  });

  it('connect ?history=N on a new link: the history is asked for and reported, nothing older than N days', async () => {
    const h = await openSession({ settings: { disableHistorySync: true } });
    const challenge = h.session.connect({ method: 'qr', historyDays: 2 });
    await settle();
    const sock = h.factory.last;
    expect(sock.config.syncFullHistory).to.equal(true);
    expect(sock.config.shouldSyncHistoryMessage?.({})).to.equal(true);
    sock.connecting();
    sock.qr('QR-1');
    expect(await challenge).to.deep.include({ status: 'qr' });
    const at = (id: string, daysAgo: number) => ({
      key: { remoteJid: '5511@s.whatsapp.net', id, fromMe: false },
      message: { conversation: id },
      messageTimestamp: Math.floor((Date.now() - daysAgo * 86_400_000) / 1000),
    });
    sock.emit('messaging-history.set', {
      chats: [],
      contacts: [],
      messages: [at('recent', 1), at('old', 3), { ...at('untimed', 0), messageTimestamp: undefined }],
    });
    expect(h.events.flatMap((e) => (e.type === 'message' ? [e.message.id] : []))).to.deep.equal(['recent']);
  });

  it('connect ?history=0 asks for no history, and a linked device ignores the days', async () => {
    const fresh = await openSession();
    void fresh.session.connect({ method: 'qr', historyDays: 0 }).catch(() => undefined);
    await settle();
    expect(fresh.factory.last.config.syncFullHistory).to.equal(false);
    expect(fresh.factory.last.config.shouldSyncHistoryMessage).to.equal(undefined);
    const linked = await connectedSession();
    await linked.session.connect({ method: 'qr', historyDays: 5 });
    expect(linked.factory.last.config.shouldSyncHistoryMessage).to.equal(undefined);
  });

  it('disableHistorySync false: syncFullHistory true and history messages reported', async () => {
    const h = await connectedSession({ settings: { disableHistorySync: false } });
    expect(h.factory.last.config.syncFullHistory).to.equal(true);
    h.factory.last.emit('messaging-history.set', {
      chats: [],
      contacts: [],
      messages: [
        { key: { remoteJid: '5511@s.whatsapp.net', id: 'H1', fromMe: false }, message: { conversation: 'old' } },
      ],
    });
    expect(h.events.map((e) => e.type)).to.deep.equal(['message']);
  });

  it('markOnlineOnConnect is false on every socket', async () => {
    const h = await connectedSession({ settings: { keepOnlineStatus: true } });
    h.factory.last.close(boom(515));
    expect(h.factory.sockets.map((s) => s.config.markOnlineOnConnect)).to.deep.equal([false, false]);
  });

  it('shares the driver caches across sockets and sessions', async () => {
    const h = await connectedSession();
    h.factory.last.close(boom(515));
    const [a, b] = h.factory.sockets;
    expect(a!.config.msgRetryCounterCache).to.equal(b!.config.msgRetryCounterCache);
    expect(a!.config.userDevicesCache).to.equal(b!.config.userDevicesCache);
    expect(a!.config.callOfferCache).to.equal(b!.config.callOfferCache);
    expect(a!.config.placeholderResendCache).to.be.an('object');
    expect(a!.config.placeholderResendCache).to.equal(b!.config.placeholderResendCache);
  });

  it('passes the proxy agents (socket, uploads) and the download dispatcher', async () => {
    const proxy: ProxySettings = { protocol: 'socks5', host: '10.0.0.1', port: 1080, user: 'u', password: 'p' };
    const built: ProxySettings[] = [];
    let closed = 0;
    const agents = {
      agent: { name: 'agent' },
      fetchAgent: { name: 'fetchAgent' },
      dispatcher: { name: 'dispatcher' },
      fetchOptions: { dispatcher: { name: 'dispatcher' } },
      close: async () => void closed++,
    } as unknown as ProxyAgents;
    const h = await connectedSession({
      proxy,
      driver: {
        proxyAgents: (p) => {
          built.push(p);
          return agents;
        },
      },
    });
    const config = h.factory.last.config;
    expect(built).to.deep.equal([proxy]);
    expect(config.agent).to.equal(agents.agent);
    expect(config.fetchAgent).to.equal(agents.fetchAgent);
    expect(config.options).to.deep.equal({ dispatcher: { name: 'dispatcher' } });
    h.factory.last.close(boom(515));
    expect(built, 'built once per session').to.have.length(1);
    await h.session.close();
    expect(closed).to.equal(1);
  });

  it('driver.close() closes open sessions', async () => {
    const h = await connectedSession();
    await h.driver.close();
    expect(h.factory.last.ended).to.equal(true);
  });
});
