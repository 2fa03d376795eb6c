import type { NumberLookup, ProfileChanges, ProfileInfo, ProfileOps } from '../ops/profile-ops.js';
import type { SandboxNet } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

/**
 * The phone's own profile and presence (in the session store), and who is on the network: the simulated
 * network models only its own phones, so a contact is found while its number is linked and online.
 */
export class SandboxProfiles implements ProfileOps {
  constructor(private readonly net: SandboxNet) {}

  /** The phone's own profile, or a contact's: found when its number is online, with no name, About or picture. */
  async get(jid?: string): Promise<ProfileInfo | undefined> {
    const me = this.net.me();
    if (jid === undefined || jid === me) {
      const p = await this.net.phone.profile();
      return {
        jid: me,
        name: p.name ?? null,
        about: p.status ?? null,
        pictureUrl: p.picture ? `data:image/jpeg;base64,${p.picture}` : null,
        isBusiness: false,
      };
    }
    const found = await this.lookup(jid);
    return found.found ? { jid: found.jid!, name: null, about: null, pictureUrl: null, isBusiness: false } : undefined;
  }

  async update(changes: ProfileChanges): Promise<void> {
    this.net.me();
    const current = await this.net.phone.profile();
    if (changes.picture !== undefined) {
      this.net.failIf('updateProfile:picture');
      current.picture = changes.picture ? changes.picture.toString('base64') : null;
    }
    if (changes.name !== undefined) {
      this.net.failIf('updateProfile:name');
      current.name = changes.name;
    }
    if (changes.status !== undefined) {
      this.net.failIf('updateProfile:status');
      current.status = changes.status;
    }
    await this.net.phone.saveProfile(current);
  }

  async lookup(number: string): Promise<NumberLookup> {
    this.net.me();
    const jid = toJid(number);
    const online = await this.net.publish(jid, { t: 'ping' });
    if (online === 0 && jid !== this.net.me()) return { found: false, jid: undefined, lid: undefined };
    return { found: true, jid, lid: undefined };
  }

  async setPresence(available: boolean): Promise<void> {
    this.net.me();
    await this.net.auth.set({ presence: available ? 'available' : 'unavailable' });
  }
}
