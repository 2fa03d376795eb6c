import { expect } from 'chai';
import { AppError, ErrorCode, FencedError } from '../../src/errors.js';
import { CREDS_KEY } from '../../src/msgnet/baileys/baileys-auth-state.js';
import type { ProxyAgents } from '../../src/msgnet/baileys/proxy-agents.js';
import type { ProxySettings } from '../../src/msgnet/msgnet-driver.js';
import { OWN_JID, boom } from './fake-baileys-socket.js';
import { connectedSession, connectionEvents, openSession, sleep, waitFor } from './baileys-harness.js';

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
      { type: 'connection', state: 'connected', numberJid: OWN_JID, profileName: 'Me' },
    ]);
    expect(h.session.state).to.equal('connected');
    expect(h.session.numberJid).to.equal(OWN_JID);
  });

  it('connect({method: qr}) resolves with the first QR and reports it', async () => {
    const h = await openSession();
    const challenge = h.session.connect({ method: 'qr' });
    await sleep(5);
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
    await sleep(5);
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
    await sleep(5);
    h.factory.last.open();
    expect(await challenge).to.deep.equal({ status: 'connected', numberJid: OWN_JID });
  });

  it('515 restartRequired: a new socket with the same auth at once, the old one ended first', async () => {
    const h = await openSession();
    const challenge = h.session.connect({ method: 'qr' });
    await sleep(5);
    const first = h.factory.last;
    first.qr('QR-1');
    await challenge;
    first.close(boom(515, 'Stream Errored (restart required)'));
    expect(h.factory.sockets).to.have.length(2);
    expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
    expect(h.factory.last.config.auth).to.equal(first.config.auth);
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
      await waitFor(() => h.factory.sockets.length === 2);
      expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
      h.factory.last.open();
      expect(connectionEvents(h.events).map((e) => e.state)).to.deep.equal(['disconnected', 'connected']);
      await h.session.close();
    });
  }

  it('backoff grows between failed attempts and resets after an open', async () => {
    const h = await connectedSession({ driver: { backoff: { baseMs: 40, maxMs: 10_000 }, random: () => 1 } });
    const started = (n: number) => waitFor(() => h.factory.sockets.length === n);
    let t = Date.now();
    h.factory.last.close(boom(428));
    await started(2);
    expect(Date.now() - t).to.be.at.least(35);
    t = Date.now();
    h.factory.last.close(boom(428));
    await started(3);
    expect(Date.now() - t, 'the second delay doubles').to.be.at.least(75);
    h.factory.last.open();
    t = Date.now();
    h.factory.last.close(boom(428));
    await started(4);
    // Without the reset this third delay would be 160 ms.
    expect(Date.now() - t, 'back to the first delay').to.be.within(35, 150);
    await h.session.close();
  });

  it('440 connectionReplaced: never reconnects', async () => {
    const h = await connectedSession();
    h.factory.last.close(boom(440, 'Stream Errored (conflict)'));
    await sleep(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(h.factory.last.ended).to.equal(true);
    expect(connectionEvents(h.events)).to.deep.equal([
      { type: 'connection', state: 'disconnected', reason: 'replaced by another session' },
    ]);
    expect(h.store.clears).to.equal(0);
  });

  for (const [code, reason] of [
    [401, 'logged out'],
    [411, 'multi-device mismatch'],
  ] as const) {
    it(`${code}: forgets the link and reports loggedout`, async () => {
      const h = await connectedSession();
      h.factory.last.close(boom(code));
      await sleep(60);
      expect(h.store.clears).to.equal(1);
      expect(h.store.data.has(CREDS_KEY)).to.equal(false);
      expect(h.factory.sockets).to.have.length(1);
      expect(connectionEvents(h.events)).to.deep.equal([{ type: 'connection', state: 'loggedout', reason }]);
      expect(h.session.numberJid).to.equal(undefined);
      // The next link starts from fresh creds.
      const challenge = h.session.connect({ method: 'qr' });
      await sleep(5);
      expect(h.factory.last.config.auth.creds.me).to.equal(undefined);
      h.factory.last.qr('QR-NEW');
      expect(await challenge).to.deep.equal({ status: 'qr', qrCode: 'QR-NEW' });
    });
  }

  it('403 forbidden: loggedout without a reconnect loop', async () => {
    const h = await connectedSession();
    h.factory.last.close(boom(403));
    await sleep(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(h.session.state).to.equal('loggedout');
  });

  it('an unreachable network fails a waiting connect at once with the cause, and keeps retrying', async () => {
    const h = await openSession({ driver: { linkTimeoutMs: 30_000, backoff: { baseMs: 20, maxMs: 40 } } });
    const started = Date.now();
    const challenge = h.session.connect({ method: 'qr' });
    await sleep(5);
    const dns = Object.assign(boom(408, 'WebSocket Error (getaddrinfo ENOTFOUND web.whatsapp.com)'), {
      data: new Error('getaddrinfo ENOTFOUND web.whatsapp.com'),
    });
    h.factory.last.close(dns);
    const err = await rejection(challenge);
    expect(Date.now() - started).to.be.below(1000);
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal(ErrorCode.NetworkUnreachable);
    expect((err as AppError).message).to.equal('could not reach WhatsApp: getaddrinfo ENOTFOUND web.whatsapp.com');
    expect(connectionEvents(h.events).at(-1)).to.include({
      state: 'disconnected',
      reason: 'network unreachable',
      error: 'getaddrinfo ENOTFOUND web.whatsapp.com',
    });
    // The background retry goes on; once the network answers, a QR comes as usual.
    await waitFor(() => h.factory.sockets.length === 2);
    h.factory.last.qr('QR-AFTER-OUTAGE');
    expect(await h.session.connect({ method: 'qr' })).to.deep.equal({ status: 'qr', qrCode: 'QR-AFTER-OUTAGE' });
    await h.session.close();
  });

  it('408 "QR refs attempts ended": stops and fails the pending link', async () => {
    const h = await openSession({ driver: { linkTimeoutMs: 5_000 } });
    const challenge = h.session.connect({ method: 'pairing', phoneNumber: '5511988887777' });
    await sleep(5);
    h.factory.last.close(boom(408, 'QR refs attempts ended'));
    const err = await rejection(challenge);
    expect(err).to.be.instanceOf(AppError);
    expect((err as AppError).code).to.equal(ErrorCode.NotConnected);
    await sleep(60);
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
    await sleep(60);
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
    await sleep(30);
    expect(h.factory.sockets).to.have.length(1);
    expect(h.events).to.deep.equal([]);
  });

  it('reconnect() replaces the socket with the same auth', async () => {
    const h = await connectedSession();
    const first = h.factory.last;
    await h.session.reconnect();
    expect(h.factory.order).to.deep.equal(['create:1', 'end:1', 'create:2']);
    expect(h.factory.last.config.auth).to.equal(first.config.auth);
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
    await sleep(20);
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
    await sleep(5);
    expect(JSON.parse(h.store.data.get(CREDS_KEY)!).me.name).to.equal('New Name');
  });

  it('stops all side effects when the store refuses a write (stale epoch)', async () => {
    const h = await connectedSession();
    const sock = h.factory.last;
    h.store.setError = new FencedError('inst-1', 3);
    sock.emit('creds.update', {});
    await sleep(10);
    expect(sock.ended).to.equal(true);
    sock.close(boom(428));
    await sleep(60);
    expect(h.factory.sockets).to.have.length(1);
    expect(await rejection(h.session.sendText('5511', 'hi'))).to.be.instanceOf(AppError);
  });

  it('refuses calls while not connected', async () => {
    const h = await openSession();
    const err = await rejection(h.session.sendText('5511988887777', 'hi'));
    expect((err as AppError).code).to.equal(ErrorCode.NotConnected);
  });

  it('offerCall is refused: Baileys has no upstream API for it', async () => {
    const h = await connectedSession();
    const err = await rejection(h.session.offerCall('5511988887777', 8));
    expect((err as Error).message).to.equal('Ring-and-drop calls are not supported by the baileys driver');
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
