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
      const agents = buildProxyAgents({ protocol, host: 'proxy.local', port: 3128, user: 'u', password: 'p' });
      expect(agents.agent).to.be.instanceOf(HttpsProxyAgent);
      expect(agents.fetchAgent).to.equal(agents.agent);
      expect((agents.agent as HttpsProxyAgent<string>).proxy.href).to.equal(`${protocol}://u:p@proxy.local:3128/`);
      expect(agents.dispatcher).to.be.instanceOf(ProxyAgent);
      expect((agents.fetchOptions as { dispatcher?: unknown }).dispatcher).to.equal(agents.dispatcher);
      await agents.close();
    });
  }

  it('socks5: a SOCKS agent (remote DNS) and a SOCKS dispatcher', async () => {
    const agents = buildProxyAgents({ protocol: 'socks5', host: '10.0.0.9', port: 1080, user: 'u', password: 'p' });
    expect(agents.agent).to.be.instanceOf(SocksProxyAgent);
    const socks = agents.agent as SocksProxyAgent;
    expect(socks.proxy).to.include({ host: '10.0.0.9', port: 1080, type: 5, userId: 'u', password: 'p' });
    expect(socks.shouldLookup).to.equal(false);
    expect(agents.dispatcher).to.be.instanceOf(Agent);
    await agents.close();
  });
});
