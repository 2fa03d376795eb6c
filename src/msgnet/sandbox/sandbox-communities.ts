import { randomInt } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError } from '../../errors.js';
import { requireGroupJid } from '../channel-jids.js';
import type { AuthStore } from '../msgnet-driver.js';
import type { CommunityInfo, CommunityOps } from '../ops/channel-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';

const COMMUNITY = 'community:';

/** Whether a group JID is a community this phone keeps (a community's parent group). */
export async function isCommunityJid(auth: Pick<AuthStore, 'get'>, jid: string): Promise<boolean> {
  return (await auth.get(`${COMMUNITY}${jid}`)) !== undefined;
}

/** A community as its creator's phone keeps it (`community:<jid>`). */
interface SandboxCommunity {
  jid: string;
  subject: string;
  description: string;
  creatorJid: string;
  groups: { jid: string; subject: string }[];
  /** Absent in communities kept before it existed: off. */
  joinApproval?: boolean;
}

const info = ({ jid, subject, description, groups, joinApproval }: SandboxCommunity): CommunityInfo => ({
  jid,
  subject,
  description,
  groups: groups.map((g) => ({ ...g })),
  joinApproval: joinApproval ?? false,
});

/**
 * The simulated network's communities: a group-like object on its creator's phone (`community:<jid>`),
 * with the groups linked to it. Linking and unlinking need the phone to be an admin of the community and
 * of the group, as the phone's copy of the group says. The sandbox models no member of a community but
 * its creator, and no announcement group.
 */
export class SandboxCommunities implements CommunityOps, SandboxOps {
  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    return [];
  }

  onWire(): void {}

  async #all(): Promise<SandboxCommunity[]> {
    return [...(await this.net.auth.list(COMMUNITY)).values()].map((raw) => JSON.parse(raw) as SandboxCommunity);
  }

  async #save(community: SandboxCommunity): Promise<void> {
    await this.net.auth.set({ [`${COMMUNITY}${community.jid}`]: JSON.stringify(community) });
  }

  async create(subject: string, description = '', options: { joinApproval?: boolean } = {}): Promise<CommunityInfo> {
    const me = this.net.me();
    this.net.failIf('communities:create');
    const community: SandboxCommunity = {
      jid: `120363${String(randomInt(10 ** 12)).padStart(12, '0')}@g.us`,
      subject,
      description,
      creatorJid: me,
      groups: [],
      joinApproval: options.joinApproval ?? false,
    };
    await this.#save(community);
    await this.net.record({
      to: community.jid,
      type: 'community',
      operation: { name: 'create', subject, description, ...(options.joinApproval ? { joinApproval: true } : {}) },
    });
    return info(community);
  }

  async list(): Promise<CommunityInfo[]> {
    this.net.me();
    this.net.failIf('communities:list');
    return (await this.#all()).map(info);
  }

  async linkGroup(communityJid: string, groupJidRaw: string): Promise<void> {
    const { community, group } = await this.#adminOfBoth('link', communityJid, groupJidRaw);
    if (community.groups.some((g) => g.jid === group.jid)) return;
    const elsewhere = (await this.#all()).find((c) => c.groups.some((g) => g.jid === group.jid));
    if (elsewhere) throw new ConflictError('The group is linked to another community');
    community.groups.push(group);
    await this.#save(community);
    await this.net.record({
      to: community.jid,
      type: 'community',
      operation: { name: 'link', groupJid: group.jid },
    });
  }

  async unlinkGroup(communityJid: string, groupJidRaw: string): Promise<void> {
    const { community, group } = await this.#adminOfBoth('unlink', communityJid, groupJidRaw);
    if (!community.groups.some((g) => g.jid === group.jid)) {
      throw new NotFoundError('The group is not linked to the community');
    }
    community.groups = community.groups.filter((g) => g.jid !== group.jid);
    await this.#save(community);
    await this.net.record({
      to: community.jid,
      type: 'community',
      operation: { name: 'unlink', groupJid: group.jid },
    });
  }

  /** The community and the group, once this phone is known to administer both. */
  async #adminOfBoth(
    op: 'link' | 'unlink',
    communityJid: string,
    groupJidRaw: string,
  ): Promise<{ community: SandboxCommunity; group: { jid: string; subject: string } }> {
    const me = this.net.me();
    const cJid = requireGroupJid(communityJid, 'communityJid');
    const gJid = requireGroupJid(groupJidRaw, 'groupJid');
    this.net.failIf(`communities:${op}`);
    const raw = await this.net.auth.get(`${COMMUNITY}${cJid}`);
    if (!raw) throw new NotFoundError('Community not found');
    const community = JSON.parse(raw) as SandboxCommunity;
    if (community.creatorJid !== me) throw new ForbiddenError('This number is not an admin of the community');
    // The phone's own copy of its groups, read only through the phone (the groups domain owns them).
    const group = (await this.net.phone.groups(true)).find((g) => g.jid === gJid);
    if (!group) throw new NotFoundError('Group not found');
    if (!group.members?.some((m) => m.jid === me && m.isAdmin)) {
      throw new ForbiddenError('This number is not an admin of the group');
    }
    return { community, group: { jid: group.jid, subject: group.name } };
  }
}
