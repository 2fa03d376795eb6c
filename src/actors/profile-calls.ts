import type { NumberLookup, ProfileInfo } from '../msgnet/msgnet-driver.js';

export type ProfileField = 'profilePicture' | 'profileName' | 'profileStatus';

/** Only the fields to apply; `picture` is the converted JPEG as base64, or null to remove it. */
export interface ProfileUpdate {
  picture?: string | null;
  name?: string;
  status?: string;
}

/** The profile calls (profile-handlers.ts): our own profile, and what the network shows of a number. */
export interface ProfileCallMap {
  'profile.update': { payload: ProfileUpdate; result: { updatedFields: ProfileField[] } };
  /** The linked number's profile, or a contact's (`jid`); undefined when the contact is not on the network. */
  'msgnet.profile': { payload: { jid?: string }; result: ProfileInfo | undefined };
  /** Whether a number is on the network (and its JID and LID). */
  'msgnet.lookup': { payload: { number: string }; result: NumberLookup };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ProfileCallMap {}
}
