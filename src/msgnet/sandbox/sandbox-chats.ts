import type { ChatFlags, ChatOps, NumberCheck } from '../ops/chat-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

const NO_FLAGS: ChatFlags = { archived: false, pinned: false, mutedUntil: null };

/**
 * The phone's chat state: archive, pin and mute flags (`chat:<jid>`), blocked contacts (`blocked:<jid>`,
 * whose messages the phone then drops), and the network's answer to "who has an account" (a number is on
 * the simulated network while some sandbox instance has it linked and online).
 */
export class SandboxChats implements ChatOps, SandboxOps {
  /** Blocked JIDs, in memory too: the wire handler decides synchronously whether to deliver. */
  readonly #blocked = new Set<string>();

  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    this.#blocked.clear();
    for (const key of (await this.net.auth.list('blocked:')).keys()) this.#blocked.add(key.slice('blocked:'.length));
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
