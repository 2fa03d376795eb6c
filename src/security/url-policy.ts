import { lookup as lookupAsync } from 'node:dns/promises';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses and URLs the service may call. Only global unicast addresses pass: loopback, private,
 * link-local, CGNAT, multicast, documentation, benchmarking and every other special range are refused, for
 * IPv4 and IPv6 alike, and so is any IPv6 form that carries an IPv4 address (IPv4-mapped, IPv4-compatible,
 * IPv4-translated, 6to4, NAT64, Teredo) whose IPv4 address is not global unicast. The ranges are ipaddr.js's
 * (the IANA special-purpose registries), not a table of ours. ALLOW_PRIVATE_URLS lifts the check for
 * development and tests.
 */

const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');
/** NAT64's well-known prefix (RFC 6052): the IPv4 address sits in the last 32 bits. */
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96');

function globalV4(address: ipaddr.IPv4): boolean {
  return address.range() === 'unicast';
}

/** The IPv4 address in bits `from`..`from+31` of an IPv6 address. */
function v4At(parts: number[], index: number, xor = 0): ipaddr.IPv4 {
  const hi = (parts[index]! ^ xor) & 0xffff;
  const lo = (parts[index + 1]! ^ xor) & 0xffff;
  return new ipaddr.IPv4([hi >> 8, hi & 0xff, lo >> 8, lo & 0xff]);
}

function globalV6(address: ipaddr.IPv6): boolean {
  const parts = address.parts;
  switch (address.range()) {
    case 'ipv4Mapped':
    case 'rfc6145':
      return globalV4(v4At(parts, 6));
    case 'rfc6052':
      // The local-use prefix 64:ff9b:1::/48 is never global; the well-known one is as global as its IPv4.
      return address.match(NAT64_WELL_KNOWN) && globalV4(v4At(parts, 6));
    case '6to4':
      return globalV4(v4At(parts, 1));
    case 'teredo':
      // Teredo carries the server's IPv4 in bits 32–63 and the client's, inverted, in the last 32 bits.
      return globalV4(v4At(parts, 2)) && globalV4(v4At(parts, 6, 0xffff));
    case 'unicast':
      // Outside 2000::/3 "unicast" is only what no registry names yet, IPv4-compatible ::a.b.c.d included.
      return address.match(GLOBAL_UNICAST_V6);
    default:
      return false;
  }
}

/** True when the address (an IP literal) is not global unicast, or is not an IP address at all. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  // ipaddr.js also reads forms like "127.1" or "0x7f000001"; only what Node calls an IP address is one here.
  if (family === 0) return true;
  const parsed = ipaddr.parse(address);
  return parsed.kind() === 'ipv4' ? !globalV4(parsed as ipaddr.IPv4) : !globalV6(parsed as ipaddr.IPv6);
}

export const INTERNAL_NETWORK = 'URLs pointing to internal networks are not allowed';

/** Host names that name this machine or a private network, whatever DNS says. */
function isInternalName(host: string): boolean {
  return host === 'localhost' || host.endsWith('.localhost') || host.endsWith('.local') || host.endsWith('.internal');
}

/** Checks a host name or IP literal without resolving it: true when it may be called. */
export function isPublicHost(rawHost: string): boolean {
  const host = rawHost.replace(/^\[|\]$/g, '').toLowerCase();
  if (isInternalName(host)) return false;
  return isIP(host) === 0 || !isBlockedAddress(host);
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
  if (!isPublicHost(url.hostname)) return { reason: INTERNAL_NETWORK };
  return { url };
}

export type Resolver = (hostname: string) => Promise<string[]>;

const systemResolver: Resolver = async (hostname) =>
  (await lookupAsync(hostname, { all: true, verbatim: true })).map((a) => a.address);

/**
 * Resolves a host and checks every address it has: the addresses to connect to, or the reason for a
 * refusal. A caller must connect to these addresses, not resolve again, or a rebinding DNS answer could
 * point it elsewhere.
 */
export async function checkHost(
  rawHost: string,
  policy: UrlPolicy,
  resolve: Resolver = systemResolver,
): Promise<{ addresses: string[] } | { reason: string }> {
  const host = rawHost.replace(/^\[|\]$/g, '');
  if (!policy.allowPrivate && !isPublicHost(host)) return { reason: INTERNAL_NETWORK };
  if (isIP(host) !== 0) return { addresses: [host] };
  let addresses: string[];
  try {
    addresses = await resolve(host);
  } catch {
    return { reason: `host ${host} could not be resolved` };
  }
  if (addresses.length === 0) return { reason: `host ${host} could not be resolved` };
  if (!policy.allowPrivate && addresses.some(isBlockedAddress)) return { reason: INTERNAL_NETWORK };
  return { addresses };
}

/** Full check of a URL: syntax, then every address its host resolves to (see `checkHost`). */
export async function checkUrl(
  raw: string,
  policy: UrlPolicy,
  resolve: Resolver = systemResolver,
): Promise<{ url: URL; addresses: string[] } | { reason: string }> {
  const syntax = checkUrlSyntax(raw, policy);
  if ('reason' in syntax) return syntax;
  const host = await checkHost(syntax.url.hostname, policy, resolve);
  return 'reason' in host ? host : { url: syntax.url, addresses: host.addresses };
}

/** A DNS lookup function as `net.connect` takes it (`lookup` option). */
export type LookupFunction = (
  hostname: string,
  options: LookupOptions,
  callback: (err: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void,
) => void;

/**
 * A `lookup` for sockets that must reach only public addresses (an instance's proxy): it resolves, refuses
 * the connection when any address is not global unicast, and hands the socket the checked address, so the
 * address connected to is the one checked, on every connection.
 */
export function publicOnlyLookup(resolve: Resolver = systemResolver): LookupFunction {
  return (hostname, options, callback) => {
    void checkHost(hostname, { allowPrivate: false }, resolve).then((checked) => {
      if ('reason' in checked) {
        const err: NodeJS.ErrnoException = new Error(`${hostname}: ${checked.reason}`);
        err.code = 'EADDRNOTALLOWED';
        callback(err, '');
        return;
      }
      const entries = checked.addresses.map((address) => ({ address, family: isIP(address) }));
      if (options.all) callback(null, entries);
      else callback(null, entries[0]!.address, entries[0]!.family);
    });
  };
}
