import { request } from 'node:https';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { expect } from 'chai';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent, ProxyAgent } from 'undici';
import { buildProxyAgents, proxyUrl } from '../../src/msgnet/baileys/proxy-agents.js';
import type { ProxySettings } from '../../src/msgnet/msgnet-driver.js';

// Building agents opens no connection: nothing here reaches the network.
describe('proxy agents', () => {
  it('encodes credentials into the proxy URL', () => {
    const proxy: ProxySettings = { protocol: 'http', host: 'proxy.local', port: 3128, user: 'us@r', password: 'p:ss' };
    expect(proxyUrl(proxy)).to.equal('http://us%40r:p%3Ass@proxy.local:3128');
    expect(proxyUrl({ ...proxy, user: undefined, password: undefined })).to.equal('http://proxy.local:3128');
    expect(proxyUrl({ ...proxy, host: '::1', user: undefined })).to.equal('http://[::1]:3128');
  });

  for (const protocol of ['http', 'https'] as const) {
    it(`${protocol}: an HTTPS-proxy agent for the socket and uploads, an undici ProxyAgent for downloads`, async () => {
      const agents = buildProxyAgents(
        { protocol, host: 'proxy.local', port: 3128, user: 'u', password: 'p' },
        { allowPrivate: true },
      );
      expect(agents.agent).to.be.instanceOf(HttpsProxyAgent);
      expect(agents.fetchAgent).to.equal(agents.agent);
      expect((agents.agent as HttpsProxyAgent<string>).proxy.href).to.equal(`${protocol}://u:p@proxy.local:3128/`);
      expect(agents.dispatcher).to.be.instanceOf(ProxyAgent);
      expect((agents.fetchOptions as { dispatcher?: unknown }).dispatcher).to.equal(agents.dispatcher);
      await agents.close();
    });
  }

  it('socks5: a SOCKS agent (remote DNS) and a SOCKS dispatcher', async () => {
    const agents = buildProxyAgents(
      { protocol: 'socks5', host: '10.0.0.9', port: 1080, user: 'u', password: 'p' },
      { allowPrivate: true },
    );
    expect(agents.agent).to.be.instanceOf(SocksProxyAgent);
    const socks = agents.agent as SocksProxyAgent;
    expect(socks.proxy).to.include({ host: '10.0.0.9', port: 1080, type: 5, userId: 'u', password: 'p' });
    expect(socks.shouldLookup).to.equal(false);
    expect(agents.dispatcher).to.be.instanceOf(Agent);
    await agents.close();
  });

  describe('at connect time, the proxy address is checked (internal networks refused unless allowed)', () => {
    let server: Server;
    let port: number;
    let connections = 0;

    before(async () => {
      // A stand-in proxy that only counts who reaches it and hangs up.
      server = createServer((socket) => {
        connections++;
        socket.destroy();
      });
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      port = (server.address() as AddressInfo).port;
    });
    after(() => new Promise<void>((resolve) => server.close(() => resolve())));

    /** One WebSocket-style request through the socket agent and one download through the dispatcher. */
    async function dialBoth(protocol: 'http' | 'socks5', host: string, allowPrivate: boolean) {
      const agents = buildProxyAgents({ protocol, host, port, user: undefined, password: undefined }, { allowPrivate });
      const viaAgent = await new Promise<string>((resolve) => {
        const req = request('https://web.whatsapp.example/', { agent: agents.agent }, () => resolve('answered'));
        req.on('error', (err: NodeJS.ErrnoException) => resolve(`${err.code} ${err.message}`));
        req.end();
      });
      // undici retries a proxy that hangs up; the deadline bounds the allowed case.
      const viaDispatcher = await fetch('https://mmg.whatsapp.example/file', {
        ...agents.fetchOptions,
        signal: AbortSignal.timeout(1000),
      }).then(
        () => 'answered',
        (err: Error & { cause?: NodeJS.ErrnoException }) => `${err.cause?.code} ${err.cause?.message ?? err.message}`,
      );
      await agents.close();
      return [viaAgent, viaDispatcher];
    }

    for (const protocol of ['http', 'socks5'] as const) {
      for (const host of ['127.0.0.1', 'localhost']) {
        it(`${protocol} proxy at ${host}: refused before any connection, then dialled when allowed`, async () => {
          connections = 0;
          for (const outcome of await dialBoth(protocol, host, false)) {
            expect(outcome).to.match(/EADDRNOTALLOWED|internal networks are not allowed/);
          }
          expect(connections).to.equal(0);
          await dialBoth(protocol, host, true);
          expect(connections).to.be.greaterThan(0);
        });
      }
    }
  });
});
