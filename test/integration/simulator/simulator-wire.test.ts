import { expect } from 'chai';
import { until } from '../../helpers/until.js';
import { DisconnectReason, WA_CERT_DETAILS } from '@whiskeysockets/baileys';
import { RawBaileys } from '../../helpers/raw-baileys.js';
import { startTestSimulator } from '../../helpers/simulator.js';
import type { TestSimulator } from '../../helpers/simulator.js';

describe('the WhatsApp simulator on the wire, with the unchanged Baileys client', function () {
  this.timeout(30_000);
  let sim: TestSimulator;
  const clients: RawBaileys[] = [];
  let n = 0;

  /** A fresh phone number and a Baileys client linked to it by QR, connected. */
  async function linked(): Promise<{ number: string; client: RawBaileys }> {
    const number = `55119770${String(++n).padStart(5, '0')}`;
    await sim.control.addPhone(number);
    const client = new RawBaileys(sim);
    clients.push(client);
    client.start();
    await sim.control.ok('POST', `/phones/${number}/scan`, { qr: await client.qr() });
    await until(() => client.open, 'open', 10_000);
    return { number, client };
  }

  const companionOf = async (number: string) =>
    (await sim.control.ok<any[]>('GET', '/devices')).find((d) => d.account === number && !d.phone && d.linked);

  beforeEach(async () => {
    sim = await startTestSimulator();
  });

  afterEach(async () => {
    await Promise.all(clients.splice(0).map((c) => c.end()));
    await sim.close();
  });

  it('refuses the handshake of a client that trusts another certificate root', async () => {
    const client = new RawBaileys(sim);
    clients.push(client);
    client.start();
    const root = WA_CERT_DETAILS.PUBLIC_KEY;
    // WhatsApp's own root, as a node without WHATSAPP_CERT_ROOT would check the chain.
    WA_CERT_DETAILS.PUBLIC_KEY = Buffer.from('142375574d0a587166aae71ebe516437c4a28b73e3695c6ce1f7f9545da8ee6b', 'hex');
    try {
      await until(() => client.closes.length > 0, 'closed', 10_000);
    } finally {
      WA_CERT_DETAILS.PUBLIC_KEY = root;
    }
    expect(client.updates.some((u) => u.qr)).to.equal(false);
  });

  it('a second login of the same device replaces the first (440), and only the newer connection gets stanzas', async () => {
    const { number, client } = await linked();
    const second = new RawBaileys(sim);
    clients.push(second);
    second.start(client.auth);
    await until(() => client.closes.includes(DisconnectReason.connectionReplaced), 'the first is replaced', 10_000);
    await until(() => second.open, 'the second is open', 10_000);
    const companion = await companionOf(number);
    expect(companion.history.map((h: any) => h.kind)).to.include('replaced');
    const alice = await sim.control.addPhone();
    await sim.control.send(alice.number, { to: number, text: 'who gets this?' });
    await until(
      () =>
        second.messages.some(
          (m) =>
            m.message?.conversation === 'who gets this?' || m.message?.extendedTextMessage?.text === 'who gets this?',
        ),
      'the second connection gets it',
      10_000,
    );
    expect(client.messages.some((m) => JSON.stringify(m.message ?? {}).includes('who gets this?'))).to.equal(false);
  });

  it('keeps a message for a disconnected device and delivers it, marked offline, at the next login', async () => {
    const { number, client } = await linked();
    await client.end();
    await until(async () => (await companionOf(number)).connection === null, 'disconnected', 10_000);
    const alice = await sim.control.addPhone();
    const { id } = await sim.control.send(alice.number, { to: number, text: 'while you were away' });
    expect((await companionOf(number)).pending).to.be.greaterThan(0);
    client.start();
    const got = await until(() => client.messages.find((m) => m.key.id === id), 'delivered at login', 10_000);
    expect(JSON.stringify(got.message)).to.include('while you were away');
    const { events } = await sim.control.log();
    expect(events.some((e) => e.kind === 'deliver' && e.id === id && e.offline === true)).to.equal(true);
    await until(async () => (await companionOf(number)).pending === 0, 'answered', 10_000);
  });

  it('refuses logins past the configured rate with 429 (rate-overlimit)', async () => {
    const { client } = await linked();
    // Half a login a second: the bucket holds less than one token, so the next login is refused.
    await sim.control.ok('POST', '/limits', { loginsPerSecond: 0.5 });
    await client.end();
    client.start();
    await until(() => client.closes.includes(429), 'a 429', 10_000);
    const stats = await sim.control.ok('GET', '/stats');
    expect(stats.loginsRefused).to.be.greaterThan(0);
  });

  it('a server restart (503) closes every connection; clients log in again when it is back', async () => {
    const a = await linked();
    const b = await linked();
    const outcome = await sim.control.ok('POST', '/faults', { kind: 'restart', downMs: 300 });
    expect(outcome.applied).to.equal(true);
    await until(() => a.client.closes.includes(503) && b.client.closes.includes(503), 'both see 503', 10_000);
    a.client.start();
    await until(() => a.client.open || a.client.closes.filter((c) => c === 503).length > 1, 'refused or open', 10_000);
    await new Promise((r) => setTimeout(r, 350));
    a.client.start();
    await until(() => a.client.open, 'open again', 10_000);
  });

  // Baileys' end() drops every `close` listener of its socket, the in-flight queries' own among them: without
  // the patch a query awaited when the server restarts (or the node ends the socket) waits its whole
  // defaultQueryTimeoutMs (60 s), and so does whatever awaits it (the fault harness saw an instance's events
  // stall that long).
  for (const ending of ['a server restart (503)', 'the client ending its socket'] as const) {
    it(`a query in flight when ${ending} ends the connection fails at once, not at its timeout`, async () => {
      const { client } = await linked();
      const sock = client.sock!;
      const settled = (p: Promise<unknown>) =>
        p.then(
          () => 'answered',
          (err: Error & { output?: { statusCode?: number } }) => err.output?.statusCode ?? err.message,
        );
      // A tag the server never answers: a query whose answer is still on its way.
      const waiting = settled(sock.waitForMessage('query-held-by-the-server'));
      if (ending === 'a server restart (503)') {
        await sim.control.ok('POST', '/faults', { kind: 'restart', downMs: 300 });
      } else await sock.end(undefined);
      const outcome = await Promise.race([waiting, new Promise((r) => setTimeout(() => r('still waiting'), 5_000))]);
      expect(outcome).to.equal(DisconnectReason.connectionClosed);
      // A wait that begins after the end fails at once too.
      expect(await settled(sock.waitForMessage('after-the-end'))).to.equal(DisconnectReason.connectionClosed);
    });
  }

  it('a logout by the phone closes the companion with 401 and its credentials no longer log in', async () => {
    const { number, client } = await linked();
    const companion = await companionOf(number);
    await sim.control.ok('POST', `/phones/${number}/unlink`, { jid: companion.jid });
    await until(() => client.closes.includes(DisconnectReason.loggedOut), '401', 10_000);
    client.start();
    await until(() => client.closes.filter((c) => c === 401).length >= 2, 'refused again with 401', 10_000);
  });

  it("a new companion gets its phone's address book, groups and, when it asks for it, recent history", async () => {
    const number = '5511977099999';
    await sim.control.ok('POST', '/phones', { number, book: { contacts: 12, groups: 2, messagesPerChat: 3 } });
    const client = new RawBaileys(sim, { syncFullHistory: true });
    clients.push(client);
    client.start();
    await sim.control.ok('POST', `/phones/${number}/scan`, { qr: await client.qr() });
    await until(() => client.history.length >= 2, 'the history', 10_000);
    const contacts = Math.max(...client.history.map((h) => h.contacts));
    const messages = client.history.reduce((n, h) => n + h.messages, 0);
    expect(contacts).to.be.at.least(12);
    expect(messages).to.equal((12 + 2) * 3);
  });

  it('the control API refuses bad input with a 4xx and an error message', async () => {
    expect((await sim.control.request('POST', '/phones', { number: 'abc' })).status).to.equal(400);
    expect((await sim.control.request('POST', '/phones/123/scan', { qr: 'x'.repeat(20) })).status).to.equal(404);
    const phone = await sim.control.addPhone();
    const scan = await sim.control.request('POST', `/phones/${phone.number}/scan`, {
      qr: 'https://wa.me/settings/linked_devices#nope,a,b,c,d',
    });
    expect(scan.status).to.equal(409);
    expect(scan.body.error).to.match(/no companion/);
    expect((await sim.control.request('POST', '/faults', { kind: 'meteor' })).status).to.equal(400);
    const bad = await fetch(`${sim.control.baseUrl}/limits`, { method: 'POST', body: '{not json' });
    expect(bad.status).to.equal(400);
  });
});
