import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';

/**
 * A `lookup` for node:http(s) that answers only with addresses the URL policy already checked, whatever
 * the name (Node asks it for each connect), so a second DNS answer cannot rebind the connection elsewhere.
 */
export function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    const family = options.family === 'IPv4' ? 4 : options.family === 'IPv6' ? 6 : options.family;
    const usable = family === 4 || family === 6 ? entries.filter((e) => e.family === family) : entries;
    const first = usable[0];
    if (!first) {
      callback(Object.assign(new Error('no checked address of the requested family'), { code: 'ENOTFOUND' }), '', 0);
      return;
    }
    if (options.all) callback(null, usable);
    else callback(null, first.address, first.family);
  };
}
