import type { PrivacyField, PrivacySettings } from '../msgnet/msgnet-driver.js';

/** The privacy calls (privacy-handlers.ts). */
export interface PrivacyCallMap {
  'privacy.get': { payload: Record<string, never>; result: PrivacySettings };
  /** Applies the fields one by one, in order, then re-reads all of them. */
  'privacy.update': { payload: { changes: [PrivacyField, string][] }; result: PrivacySettings };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends PrivacyCallMap {}
}
