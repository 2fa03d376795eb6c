import type { Contact } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { MAX_ADDRESS_BOOK } from '../ops/address-book.js';
import type { AddressBookEntry } from '../ops/address-book.js';
import type { SessionStorage } from './baileys-auth-state.js';
import { DirtyKeys } from './dirty-keys.js';
import { isLidJid, isPnJid, userJid } from './jids.js';

/** `contacts:<address>` holds one person (JSON), keyed by the phone-number address when known, else the LID. */
export const CONTACT_PREFIX = 'contacts:';

/**
 * The address book synced from the phone. v7 keeps no contact store: the contacts of the history sync,
 * the app-state contact actions (`contacts.upsert`) and the push names messages carry (`contacts.update`)
 * are merged here, one key per person in the auth namespace, so that a new owner still lists them.
 */
export class ContactBook {
  readonly #entries = new Map<string, AddressBookEntry>();
  /** LID → the key of its entry, for updates that name a person by LID only. */
  readonly #byLid = new Map<string, string>();
  readonly #unsaved: DirtyKeys;

  private constructor(storage: SessionStorage, log: Logger) {
    this.#unsaved = new DirtyKeys(
      storage,
      (keys) =>
        Object.fromEntries(
          keys.map((key) => {
            const entry = this.#entries.get(key);
            return [CONTACT_PREFIX + key, entry ? JSON.stringify(entry) : null];
          }),
        ),
      log,
      'the address book',
    );
  }

  static async load(storage: SessionStorage, log: Logger): Promise<ContactBook> {
    const book = new ContactBook(storage, log);
    for (const [key, raw] of await storage.list(CONTACT_PREFIX)) {
      const entry = JSON.parse(raw) as AddressBookEntry;
      const id = key.slice(CONTACT_PREFIX.length);
      book.#entries.set(id, entry);
      if (entry.lid) book.#byLid.set(entry.lid, id);
    }
    return book;
  }

  /** Merges contacts as Baileys reports them (whole or partial); a field it leaves out keeps its value. */
  add(contacts: Partial<Contact>[]): void {
    for (const contact of contacts) this.#merge(contact);
    this.#unsaved.flush();
  }

  list(): AddressBookEntry[] {
    return [...this.#entries.values()].map((e) => ({ ...e }));
  }

  #merge(contact: Partial<Contact>): void {
    const pn = [contact.phoneNumber, contact.id].find((j) => isPnJid(j));
    const lid = [contact.lid, contact.id].find((j) => isLidJid(j));
    const jid = pn ? userJid(pn) : undefined;
    const lidJid = lid ? userJid(lid) : undefined;
    if (!jid && !lidJid) return;
    const lidKey = lidJid ? this.#byLid.get(lidJid) : undefined;
    const key = jid ?? lidKey ?? lidJid!;
    let entry = this.#entries.get(key);
    // Known by its LID only until now: the entry moves under the phone-number address.
    if (lidKey && lidKey !== key) {
      const old = this.#entries.get(lidKey);
      this.#entries.delete(lidKey);
      this.#unsaved.mark(lidKey);
      if (old) entry = { ...old, ...definedOf(entry) };
    }
    if (!entry) {
      if (this.#entries.size >= MAX_ADDRESS_BOOK) return;
      entry = { jid: null, lid: null, pushName: null, fullName: null, firstName: null, businessName: null };
    }
    const next: AddressBookEntry = {
      ...entry,
      ...(jid ? { jid } : {}),
      ...(lidJid ? { lid: lidJid } : {}),
      ...(contact.notify ? { pushName: contact.notify } : {}),
      ...(contact.name ? { fullName: contact.name } : {}),
      ...(contact.verifiedName ? { businessName: contact.verifiedName } : {}),
    };
    if (next.lid) this.#byLid.set(next.lid, key);
    if (JSON.stringify(next) === JSON.stringify(this.#entries.get(key))) return;
    this.#entries.set(key, next);
    this.#unsaved.mark(key);
  }
}

function definedOf(entry: AddressBookEntry | undefined): Partial<AddressBookEntry> {
  if (!entry) return {};
  return Object.fromEntries(Object.entries(entry).filter(([, v]) => v !== null));
}
