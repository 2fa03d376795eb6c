import { expect } from 'chai';
import { startNetworkNode } from './network-support.js';
import type { NetworkNode } from './network-support.js';
import { expectOk } from './support.js';

/** Connecting while WhatsApp cannot be reached: a quick 502 with the cause, and the cause kept on the instance. */
describe('connect while the network cannot be reached', () => {
  let n: NetworkNode;
  before(async () => {
    n = await startNetworkNode();
  });
  after(async () => {
    await n?.stop();
  });

  const entryOf = async (name: string) => {
    const list = await n.node.api.get('/api/instance/list', { token: n.account });
    expectOk(list);
    return (list.body.instances as { name: string; connection: Record<string, unknown> }[]).find(
      (i) => i.name === name,
    )!;
  };

  it('answers 502 `could not reach WhatsApp: <cause>` at once, lists the cause, and clears it once connected', async () => {
    const token = await n.idle('offline');
    expect((await entryOf('offline')).connection).to.include({ state: 'disconnected', lastError: null });
    await n.fault('offline', token, 'network', 'getaddrinfo ENOTFOUND web.whatsapp.com');

    const started = Date.now();
    const res = await n.node.api.get('/api/instance/connect/offline', { token });
    expect(Date.now() - started).to.be.below(3000);
    expect(res.status, res.text).to.equal(502);
    expect(res.body).to.deep.equal({
      success: false,
      error: {
        message: 'could not reach WhatsApp: getaddrinfo ENOTFOUND web.whatsapp.com',
        code: 'network_unreachable',
      },
    });
    expect((await entryOf('offline')).connection).to.include({
      state: 'disconnected',
      lastError: 'getaddrinfo ENOTFOUND web.whatsapp.com',
    });

    // The network is back: the next connect gives a QR code; a link clears the error.
    const again = await n.node.api.get('/api/instance/connect/offline', { token });
    expectOk(again);
    expect(again.body.status).to.equal('qr');
    expect((await entryOf('offline')).connection.lastError).to.equal('getaddrinfo ENOTFOUND web.whatsapp.com');
    expectOk(await n.node.api.post('/api/sandbox/link/offline', { number: '5511600000001' }, { token }));
    expect((await entryOf('offline')).connection).to.include({ state: 'connected', lastError: null });
  });
});
