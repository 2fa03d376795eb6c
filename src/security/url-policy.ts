import { lookup } from 'node:dns/promises';
import { BlockList, isIP } from 'node:net';

/**
 * Which URLs the service may call. Loopback, private, link-local, CGNAT, multicast and other special
 * ranges are refused (IPv4 and IPv6, including IPv4-mapped IPv6), both as literals and after DNS
 * resolution, unless ALLOW_PRIVATE_URLS lifts the check for development and tests.
 */

const blocked = new BlockList();
for (const [net, prefix] of [
  ['0.0.0.0', 8],
  ['10.0.0.0', 8],
  ['100.64.0.0', 10],
  ['127.0.0.0', 8],
  ['169.254.0.0', 16],
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv4');
}
for (const [net, prefix] of [
  ['::', 128],
  ['::1', 128],
  ['64:ff9b::', 96],
  ['100::', 64],
  ['2001:db8::', 32],
  ['fc00::', 7],
  ['fe80::', 10],
  ['fec0::', 10],
  ['ff00::', 8],
] as const) {
  blocked.addSubnet(net, prefix, 'ipv6');
}

/** True when the address is in a range the service must never call. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return blocked.check(address, 'ipv4');
  if (family !== 6) return true;
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  if (mapped?.[1]) return blocked.check(mapped[1], 'ipv4');
  return blocked.check(address, 'ipv6');
}

export interface UrlPolicy {
  allowPrivate: boolean;
  /** Refuse plain http (account webhooks want HTTPS unless private URLs are allowed). */
  requireHttps?: boolean;
}

/** Parses and checks the URL's form and, for literal hosts, its address. Returns the reason on refusal. */
export function checkUrlSyntax(raw: string, policy: UrlPolicy): { url: URL } | { reason: string } {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return { reason: 'not a valid URL' };
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return { reason: 'only http and https URLs are allowed' };
  if (policy.requireHttps && url.protocol !== 'https:' && !policy.allowPrivate) return { reason: 'HTTPS is required' };
  if (url.username || url.password) return { reason: 'credentials in URLs are not allowed' };
  if (policy.allowPrivate) return { url };
  const host = url.hostname.replace(/^\[|\]$/g, '').toLowerCase();
  if (host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal')) {
    return { reason: 'URLs pointing to internal networks are not allowed' };
  }
  if (isIP(host) !== 0 && isBlockedAddress(host)) {
    return { reason: 'URLs pointing to internal networks are not allowed' };
  }
  return { url };
}

export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) =>
  (await lookup(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Full check: syntax, then every address the host resolves to. A fetcher must connect to the returned
 * addresses, not resolve again, or a rebinding DNS answer could point it elsewhere.
 */
export async function checkUrl(
  raw: string,
  policy: UrlPolicy,
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; addresses: string[] } | { reason: string }> {
  const syntax = checkUrlSyntax(raw, policy);
  if ('reason' in syntax) return syntax;
  const host = syntax.url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(host) !== 0) return { url: syntax.url, addresses: [host] };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return { reason: `host ${host} could not be resolved` };
  }
  if (addresses.length === 0) return { reason: `host ${host} could not be resolved` };
  if (!policy.allowPrivate && addresses.some(isBlockedAddress)) {
    return { reason: 'URLs pointing to internal networks are not allowed' };
  }
  return { url: syntax.url, addresses };
}
