import type { Agent } from 'node:https';
import { socksDispatcher } from 'fetch-socks';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { ProxyAgent } from 'undici';
import type { Dispatcher } from 'undici';
import type { ProxySettings } from '../msgnet-driver.js';

/**
 * What one session needs to send all its traffic through a proxy: Baileys takes an `https.Agent` for
 * the WebSocket (`agent`) and media uploads (`fetchAgent`), and, in v7, an undici dispatcher for every
 * native-fetch download (`options.dispatcher`); without it downloads bypass the proxy (#2758).
 */
export interface ProxyAgents {
  agent: Agent;
  fetchAgent: Agent;
  dispatcher: Dispatcher;
  /** Baileys' `options` (fetch `RequestInit`) carrying the dispatcher. */
  fetchOptions: RequestInit;
  /** Closes the pooled proxy connections. */
  close(): Promise<void>;
}

export function proxyUrl(proxy: ProxySettings, scheme: string = proxy.protocol): string {
  const auth =
    proxy.user !== undefined && proxy.user !== ''
      ? `${encodeURIComponent(proxy.user)}:${encodeURIComponent(proxy.password ?? '')}@`
      : '';
  return `${scheme}://${auth}${hostForUrl(proxy.host)}:${proxy.port}`;
}

export function buildProxyAgents(proxy: ProxySettings): ProxyAgents {
  if (proxy.protocol === 'socks5') {
    // socks5h: the proxy resolves WhatsApp's host names, so DNS does not leak around it.
    const agent = new SocksProxyAgent(proxyUrl(proxy, 'socks5h'));
    const dispatcher = socksDispatcher({
      type: 5,
      host: proxy.host,
      port: proxy.port,
      ...(proxy.user ? { userId: proxy.user, password: proxy.password ?? '' } : {}),
    });
    return bundle(agent, dispatcher);
  }
  const agent = new HttpsProxyAgent(proxyUrl(proxy));
  const dispatcher = new ProxyAgent({
    uri: `${proxy.protocol}://${hostForUrl(proxy.host)}:${proxy.port}`,
    ...(proxy.user ? { token: basicAuth(proxy.user, proxy.password ?? '') } : {}),
  });
  return bundle(agent, dispatcher);
}

function bundle(agent: Agent, dispatcher: Dispatcher): ProxyAgents {
  return {
    agent,
    fetchAgent: agent,
    dispatcher,
    // npm undici's Dispatcher and Node's bundled undici-types differ only in their declarations.
    fetchOptions: { dispatcher } as unknown as RequestInit,
    close: async () => {
      agent.destroy();
      await dispatcher.close();
    },
  };
}

function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

/** IPv6 literals need brackets inside a URL. */
function hostForUrl(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}
