import type { GroupMetadata } from '@whiskeysockets/baileys';
import type { CommunityInfo, CommunityOps } from '../ops/channel-ops.js';
import { toJid } from './jids.js';
import { refusing } from './network-refusal.js';
import type { BaileysSocket } from './socket-port.js';

function community(meta: GroupMetadata, groups: { jid: string; subject: string }[]): CommunityInfo {
  return {
    jid: meta.id,
    subject: meta.subject,
    description: meta.desc ?? '',
    groups,
    joinApproval: !!meta.joinApprovalMode,
  };
}

/**
 * Communities through Baileys' `w:g2` queries. WhatsApp reports a community as a group marked as a
 * parent, and its groups (the announcement group among them) as groups linked to that parent, so `list`
 * reads them all from the groups this number is in.
 */
export class BaileysCommunities implements CommunityOps {
  constructor(
    private readonly socket: () => BaileysSocket,
    /** Each community and group read, for the session's metadata cache (messages say `isCommunity` from it). */
    private readonly onRead: (group: GroupMetadata) => void = () => undefined,
  ) {}

  async create(
    subject: string,
    description?: string,
    options: { joinApproval?: boolean } = {},
  ): Promise<CommunityInfo> {
    const sock = this.socket();
    const meta = await refusing('create the community', () => sock.communityCreate(subject, description ?? ''));
    if (!meta) throw new Error('WhatsApp did not describe the new community');
    if (options.joinApproval) {
      await refusing('require approval to join the community', () => sock.communityJoinApprovalMode(meta.id, 'on'));
      meta.joinApprovalMode = true;
    }
    this.onRead(meta);
    // The groups WhatsApp made with it (its announcement group); the community exists even when this read fails.
    const linked = await sock.communityFetchLinkedGroups(meta.id).catch(() => undefined);
    const groups = (linked?.linkedGroups ?? []).flatMap((g) => (g.id ? [{ jid: g.id, subject: g.subject }] : []));
    return community(meta, groups);
  }

  async list(): Promise<CommunityInfo[]> {
    const sock = this.socket();
    const all = Object.values(await refusing('list the communities', () => sock.groupFetchAllParticipating()));
    all.forEach((group) => this.onRead(group));
    return all
      .filter((g) => g.isCommunity)
      .map((parent) =>
        community(
          parent,
          all.filter((g) => g.linkedParent === parent.id).map((g) => ({ jid: g.id, subject: g.subject })),
        ),
      );
  }

  async linkGroup(communityJid: string, groupJid: string): Promise<void> {
    const sock = this.socket();
    await refusing('link the group', () => sock.communityLinkGroup(toJid(groupJid), toJid(communityJid)));
  }

  async unlinkGroup(communityJid: string, groupJid: string): Promise<void> {
    const sock = this.socket();
    await refusing('unlink the group', () => sock.communityUnlinkGroup(toJid(groupJid), toJid(communityJid)));
  }
}
