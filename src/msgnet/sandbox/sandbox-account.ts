import type {
  ChatLabels,
  GroupInfo,
  LabelInfo,
  PrivacyField,
  PrivacySettings,
  ProfileChanges,
  ProfileInfo,
} from '../msgnet-driver.js';
import type { SandboxNet } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';

/**
 * What the simulated phone holds of its account: its groups list, labels, profile and privacy (all in the
 * session store), and who is on the network.
 */
export class SandboxAccount {
  constructor(private readonly net: SandboxNet) {}

  async listGroups(includeMembers: boolean): Promise<GroupInfo[]> {
    this.net.me();
    this.net.failIf('listGroups');
    return this.net.phone.groups(includeMembers);
  }

  /** What the session stored from label events; a refresh asks the network again, so it needs the connection. */
  async chatLabels(refresh = false): Promise<ChatLabels[]> {
    if (refresh) {
      this.net.me();
      this.net.failIf('chatLabels');
    }
    return this.net.phone.chatLabels();
  }

  async listLabels(): Promise<LabelInfo[]> {
    return this.net.phone.labels();
  }

  async assignLabels(chatJid: string, labelIds: string[], add: boolean): Promise<ChatLabels> {
    this.net.me();
    const jid = toJid(chatJid);
    const { after, changed } = await this.net.phone.assignLabels(jid, labelIds, add);
    if (changed.length) {
      this.net.emit({
        type: 'labels',
        chatJid: jid,
        labels: changed,
        action: add ? 'add' : 'remove',
        timestamp: Date.now(),
      });
    }
    return { chatJid: jid, labels: after };
  }

  async updateProfile(changes: ProfileChanges): Promise<void> {
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

  /**
   * The phone's own profile, or a contact's: the simulated network models only its own phones' profiles,
   * so a contact is found when its number is online, with no name, About or picture.
   */
  async getProfile(jid?: string): Promise<ProfileInfo | undefined> {
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

  async getPrivacy(): Promise<PrivacySettings> {
    this.net.me();
    return this.net.phone.privacy();
  }

  async setPrivacy(field: PrivacyField, value: string): Promise<void> {
    const current = await this.getPrivacy();
    this.net.failIf(`setPrivacy:${field}`);
    await this.net.phone.savePrivacy({ ...current, [field]: value });
  }

  async lookup(number: string): Promise<{ found: boolean; jid: string | undefined; lid: string | undefined }> {
    this.net.me();
    const jid = toJid(number);
    const online = await this.net.publish(jid, { t: 'ping' });
    if (online === 0 && jid !== this.net.me()) return { found: false, jid: undefined, lid: undefined };
    return { found: true, jid, lid: undefined };
  }
}
