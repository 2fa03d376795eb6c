/** A profile as the network shows it to this account. */
export interface ProfileInfo {
  jid: string;
  name: string | null;
  /** The About text. */
  about: string | null;
  pictureUrl: string | null;
  isBusiness: boolean;
  /** A Business account's public profile. */
  business?: BusinessProfile;
}

export interface BusinessProfile {
  description: string | null;
  category: string | null;
  email: string | null;
  website: string[];
  address: string | null;
}

export interface ProfileChanges {
  /** JPEG bytes, or null to remove the picture. */
  picture?: Buffer | null;
  name?: string;
  status?: string;
}

/** Whether a number is on the network, and its addresses. */
export interface NumberLookup {
  found: boolean;
  jid: string | undefined;
  lid: string | undefined;
}

/** The linked number's own profile and presence, and what the network shows of others. */
export interface ProfileOps {
  /** The linked number's profile (no `jid`), or a contact's; undefined when the contact is not on the network. */
  get(jid?: string): Promise<ProfileInfo | undefined>;
  /** Applies the given fields: picture, then name, then About. */
  update(changes: ProfileChanges): Promise<void>;
  lookup(number: string): Promise<NumberLookup>;
  /** Shows the number online (`keepOnlineStatus`) or not. */
  setPresence(available: boolean): Promise<void>;
}
