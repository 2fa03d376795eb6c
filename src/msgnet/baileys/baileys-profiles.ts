import type { WABusinessProfile } from '@whiskeysockets/baileys';
import { NotConnectedError } from '../../errors.js';
import type { BusinessProfile, NumberLookup, ProfileChanges, ProfileInfo, ProfileOps } from '../ops/profile-ops.js';
import { digitsOf, toJid } from './jids.js';
import { lookup, updateProfile } from './outgoing.js';
import type { BaileysSocket } from './socket-port.js';

/** A Business account's public profile as Baileys reads it. */
function businessProfile(b: WABusinessProfile): BusinessProfile {
  return {
    description: b.description || null,
    category: b.category ?? null,
    email: b.email ?? null,
    website: b.website ?? [],
    address: b.address ?? null,
  };
}

/** The About text from a fetchStatus result (`{status: {status, setAt}}` in Baileys 7). */
function statusText(entry: unknown): string | null {
  const status = (entry as { status?: { status?: unknown } } | undefined)?.status?.status;
  return typeof status === 'string' ? status : null;
}

/** Profiles through Baileys: our own (read, changed, presence) and what the network shows of a contact. */
export class BaileysProfiles implements ProfileOps {
  constructor(private readonly socket: () => BaileysSocket) {}

  async get(jid?: string): Promise<ProfileInfo | undefined> {
    const sock = this.socket();
    const me = sock.user?.id ? toJid(digitsOf(sock.user.id.split(':')[0]!.split('@')[0]!)) : undefined;
    let target = me;
    if (jid !== undefined && jid !== me) {
      const found = await this.lookup(jid);
      if (!found.found || !found.jid) return undefined;
      target = found.jid;
    }
    if (!target) throw new NotConnectedError();
    // Each part may be hidden by the contact's privacy settings: a refusal means "not shown", not an error.
    const [about, pictureUrl, business] = await Promise.all([
      sock.fetchStatus(target).then(
        (list) => statusText(list?.[0]),
        () => null,
      ),
      sock.profilePictureUrl(target, 'image').then(
        (url) => url ?? null,
        () => null,
      ),
      sock.getBusinessProfile(target).then(
        (b) => (b ? businessProfile(b) : undefined),
        () => undefined,
      ),
    ]);
    return {
      jid: target,
      name: target === me ? (sock.user?.name ?? null) : null,
      about,
      pictureUrl,
      isBusiness: business !== undefined,
      ...(business ? { business } : {}),
    };
  }

  async update(changes: ProfileChanges): Promise<void> {
    return updateProfile(this.socket(), changes);
  }

  async lookup(number: string): Promise<NumberLookup> {
    return lookup(this.socket(), number.includes('@') ? number : digitsOf(number));
  }

  async setPresence(available: boolean): Promise<void> {
    await this.socket().sendPresenceUpdate(available ? 'available' : 'unavailable');
  }
}
