import { MAX_ADDRESS_BOOK } from '../ops/address-book.js';
import type { AddressBookEntry } from '../ops/address-book.js';
import type { ChatFlags, ChatOps, LastMessage, NumberCheck } from '../ops/chat-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

const NO_FLAGS: ChatFlags = { archived: false, pinned: false, mutedUntil: null };

/** `contact:<jid>` holds one person of the phone's address book (JSON). */
const CONTACT_PREFIX = 'contact:';

type ContactNames = Partial<Pick<AddressBookEntry, 'pushName' | 'fullName' | 'firstName'>>;

function emptyEntry(jid: string): AddressBookEntry {
  return { jid, lid: null, pushName: null, fullName: null, firstName: null, businessName: null };
}

/**
 * The phone's chat state: archive, pin and mute flags (`chat:<jid>`), blocked contacts (`blocked:<jid>`,
 * whose messages the phone then drops), its address book (`contact:<jid>`: contacts the phone saved, and
 * the push names of people who wrote), and the network's answer to "who has an account" (a number is on
 * the simulated network while some sandbox instance has it linked and online).
 */
export class SandboxChats implements ChatOps, SandboxOps {
  /** Blocked JIDs, in memory too: the wire handler decides synchronously whether to deliver. */
  readonly #blocked = new Set<string>();
  /** Address book entries noted since the last listing, in memory until their write is done. */
  readonly #noted = new Map<string, ContactNames>();
  #contactCount = 0;

  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    this.#blocked.clear();
    for (const key of (await this.net.auth.list('blocked:')).keys()) this.#blocked.add(key.slice('blocked:'.length));
    this.#contactCount = (await this.net.auth.list(CONTACT_PREFIX)).size;
    return [];
  }

  onWire(): void {}

  isBlocked(jid: string): boolean {
    return this.#blocked.has(jid);
  }

  async flags(chatJid: string): Promise<ChatFlags> {
    const raw = await this.net.auth.get(`chat:${chatJid}`);
    return raw ? { ...NO_FLAGS, ...(JSON.parse(raw) as Partial<ChatFlags>) } : { ...NO_FLAGS };
  }

  async #setFlags(name: string, chatJid: string, change: Partial<ChatFlags>): Promise<void> {
    this.net.me();
    this.net.failIf(`chats:${name}`);
    const jid = toJid(chatJid);
    const next = { ...(await this.flags(jid)), ...change };
    await this.net.auth.set({ [`chat:${jid}`]: JSON.stringify(next) });
    await this.net.record({ to: jid, type: 'chat', operation: { name, ...change } });
  }

  async archive(chatJid: string, archive: boolean): Promise<void> {
    // WhatsApp unpins a chat it archives.
    await this.#setFlags('archive', chatJid, archive ? { archived: true, pinned: false } : { archived: false });
  }

  async pin(chatJid: string, pin: boolean): Promise<void> {
    await this.#setFlags('pin', chatJid, { pinned: pin });
  }

  async mute(chatJid: string, until: number | null): Promise<void> {
    await this.#setFlags('mute', chatJid, { mutedUntil: until });
  }

  async block(jid: string, block: boolean): Promise<void> {
    this.net.me();
    this.net.failIf('chats:block');
    const contact = toJid(jid);
    await this.net.auth.set({ [`blocked:${contact}`]: block ? '1' : null });
    if (block) this.#blocked.add(contact);
    else this.#blocked.delete(contact);
    await this.net.record({ to: contact, type: 'chat', operation: { name: 'block', block } });
  }

  async clear(chatJid: string): Promise<void> {
    this.net.me();
    this.net.failIf('chats:clear');
    await this.net.record({ to: toJid(chatJid), type: 'chat', operation: { name: 'clear' } });
  }

  async markUnread(chatJid: string): Promise<void> {
    this.net.me();
    this.net.failIf('chats:markUnread');
    await this.net.record({ to: toJid(chatJid), type: 'chat', operation: { name: 'markUnread' } });
  }

  async deleteForMe(chatJid: string, message: LastMessage, deleteMedia: boolean): Promise<void> {
    this.net.me();
    this.net.failIf('chats:deleteForMe');
    await this.net.record({
      to: toJid(chatJid),
      type: 'chat',
      operation: { name: 'deleteForMe', messageId: message.id, deleteMedia },
    });
  }

  async star(chatJid: string, message: { id: string; fromMe: boolean }, star: boolean): Promise<void> {
    this.net.me();
    this.net.failIf('chats:star');
    await this.net.record({
      to: toJid(chatJid),
      type: 'chat',
      operation: { name: 'star', messageId: message.id, star },
    });
  }

  async contacts(): Promise<AddressBookEntry[]> {
    const all = new Map<string, AddressBookEntry>();
    for (const [key, raw] of await this.net.auth.list(CONTACT_PREFIX)) {
      all.set(key.slice(CONTACT_PREFIX.length), JSON.parse(raw) as AddressBookEntry);
    }
    for (const [jid, names] of this.#noted) all.set(jid, { ...(all.get(jid) ?? emptyEntry(jid)), ...names });
    return [...all.values()];
  }

  /**
   * Notes a person in the address book, as the phone syncs it: a saved contact's names, or the push name
   * a message carries. Kept in memory at once (a listing right after sees it) and stored in the background.
   */
  noteContact(jid: string, names: ContactNames): void {
    const given = Object.fromEntries(Object.entries(names).filter(([, v]) => v)) as ContactNames;
    const noted = { ...this.#noted.get(jid), ...given };
    this.#noted.set(jid, noted);
    void this.#store(jid, noted).catch(() => undefined);
  }

  async #store(jid: string, noted: ContactNames): Promise<void> {
    const raw = await this.net.auth.get(CONTACT_PREFIX + jid);
    if (!raw && this.#contactCount >= MAX_ADDRESS_BOOK) return;
    if (!raw) this.#contactCount++;
    const entry = { ...(raw ? (JSON.parse(raw) as AddressBookEntry) : emptyEntry(jid)), ...noted };
    await this.net.auth.set({ [CONTACT_PREFIX + jid]: JSON.stringify(entry) });
    // A later note for the same person stays in memory until its own write.
    if (this.#noted.get(jid) === noted) this.#noted.delete(jid);
  }

  async check(numbers: string[]): Promise<NumberCheck[]> {
    const me = this.net.me();
    this.net.failIf('chats:check');
    return Promise.all(
      numbers.map(async (number) => {
        const jid = toJid(number);
        const exists = jid === me || (await this.net.publish(jid, { t: 'ping' })) > 0;
        return { number, exists, jid: exists ? jid : null };
      }),
    );
  }
}
