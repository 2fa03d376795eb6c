import type { LinkChallenge, LinkRequest } from '../msgnet/msgnet-driver.js';
import type { ConnectionState } from '../store/records.js';

/** The connection's calls (connection-handlers.ts): linking, logging out, reconnecting, re-read settings. */
export interface ConnectionCallMap {
  /** Starts linking (QR or pairing code), or says the instance is already connected. */
  'msgnet.connect': { payload: LinkRequest; result: LinkChallenge };
  'msgnet.logout': { payload: Record<string, never>; result: { state: ConnectionState } };
  'msgnet.reconnect': { payload: Record<string, never>; result: { state: ConnectionState } };
  /** Re-reads the instance's settings from the store and applies what is live (presence). */
  'settings.apply': { payload: Record<string, never>; result: { applied: boolean } };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ConnectionCallMap {}
}
