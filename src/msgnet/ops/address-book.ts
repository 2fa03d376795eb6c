/** One person of the phone's address book, as the network synced it to this device. */
export interface AddressBookEntry {
  /** The phone-number address, when known. */
  jid: string | null;
  /** The hidden address (LID), when known. */
  lid: string | null;
  /** The name the person set for themselves. */
  pushName: string | null;
  /** The name saved on the phone. */
  fullName: string | null;
  /** The first name saved on the phone, when the network reports it apart. */
  firstName: string | null;
  /** A Business account's verified name. */
  businessName: string | null;
}

/** The most people one instance's address book keeps: bounds the stored list and its answer. */
export const MAX_ADDRESS_BOOK = 20_000;

/** Whether an entry is the person `address` names (by phone-number address or LID). */
export function entryMatches(entry: AddressBookEntry, address: string): boolean {
  return entry.jid === address || entry.lid === address;
}
