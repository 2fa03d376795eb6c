import type { Agent } from 'node:https';
import { isIP } from 'node:net';
import { socksConnector } from 'fetch-socks';
import { HttpsProxyAgent } from 'https-proxy-agent';
import { SocksProxyAgent } from 'socks-proxy-agent';
import { Agent as UndiciAgent, ProxyAgent } from 'undici';
import type { buildConnector, Dispatcher } from 'undici';
import { INTERNAL_NETWORK, isPublicHost, publicOnlyLookup } from '../../security/url-policy.js';
import type { LookupFunction } from '../../security/url-policy.js';
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

export interface ProxyAgentOptions {
  /** ALLOW_PRIVATE_URLS: a proxy on an internal network may be dialled (development and tests only). */
  allowPrivate: boolean;
  /** How the proxy's address is found and checked. @default publicOnlyLookup() unless allowPrivate */
  lookup?: LookupFunction;
}

/**
 * The agents of one proxy. Every connection to the proxy resolves its host through `lookup`, which
 * refuses internal addresses and hands the socket the address it checked (no second resolution that a
 * rebinding DNS answer could turn elsewhere).
 */
export function buildProxyAgents(proxy: ProxySettings, options: ProxyAgentOptions): ProxyAgents {
  // Sockets skip `lookup` for an IP literal, so a literal is checked here, once, for every connection.
  if (!options.allowPrivate && isIP(proxy.host.replace(/^\[|\]$/g, '')) !== 0 && !isPublicHost(proxy.host)) {
    return refusingAgents(proxy);
  }
  const lookup = options.lookup ?? (options.allowPrivate ? undefined : publicOnlyLookup());
  const viaLookup = lookup ? { lookup } : {};
  if (proxy.protocol === 'socks5') {
    // socks5h: the proxy resolves WhatsApp's host names, so DNS does not leak around it.
    const agent = new SocksProxyAgent(proxyUrl(proxy, 'socks5h'), { socketOptions: viaLookup });
    const dispatcher = new UndiciAgent({ connect: socksThroughLookup(proxy, lookup) });
    return bundle(agent, dispatcher);
  }
  const agent = new HttpsProxyAgent(proxyUrl(proxy), viaLookup);
  const dispatcher = new ProxyAgent({
    uri: `${proxy.protocol}://${hostForUrl(proxy.host)}:${proxy.port}`,
    proxyTls: viaLookup,
    ...(proxy.user ? { token: basicAuth(proxy.user, proxy.password ?? '') } : {}),
  });
  return bundle(agent, dispatcher);
}

/** fetch-socks dials the proxy itself: the checked address is looked up first and given to it as the host. */
function socksThroughLookup(proxy: ProxySettings, lookup: LookupFunction | undefined): buildConnector.connector {
  const connectTo = (host: string) =>
    socksConnector({
      type: 5,
      host,
      port: proxy.port,
      ...(proxy.user ? { userId: proxy.user, password: proxy.password ?? '' } : {}),
    });
  if (!lookup) return connectTo(proxy.host);
  return (options, callback) => {
    lookup(proxy.host, { all: false }, (err, address) => {
      if (err) callback(err, null);
      else connectTo(address as string)(options, callback);
    });
  };
}

/** Agents whose every connection fails as a refused proxy address would (saved before the policy, or edited). */
function refusingAgents(proxy: ProxySettings): ProxyAgents {
  const refusal = (): NodeJS.ErrnoException =>
    Object.assign(new Error(`${proxy.host}: ${INTERNAL_NETWORK}`), { code: 'EADDRNOTALLOWED' });
  const agent = Object.assign(new HttpsProxyAgent(proxyUrl(proxy)), {
    connect: () => Promise.reject(refusal()),
  });
  const dispatcher = new UndiciAgent({ connect: (_options, callback) => callback(refusal(), null) });
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
