import type { LookupFunction } from 'node:net';
import { isIP } from 'node:net';

/**
 * A `lookup` for node:http(s) that answers only with addresses already checked by the URL policy, so the
 * connection goes where the check looked (a second DNS answer cannot rebind it elsewhere).
 */
export function pinnedLookup(addresses: string[]): LookupFunction {
  const entries = addresses.map((address) => ({ address, family: isIP(address) === 6 ? 6 : 4 }));
  return ((_hostname: string, options: { all?: boolean }, callback: (...args: unknown[]) => void) => {
    if (options?.all) callback(null, entries);
    else callback(null, entries[0]!.address, entries[0]!.family);
  }) as unknown as LookupFunction;
}
