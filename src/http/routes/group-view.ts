import type { z } from 'zod';
import type { GroupDetails } from '../../msgnet/ops/group-ops.js';
import { INVITE_LINK_PREFIX } from '../../msgnet/ops/group-texts.js';
import type { groupSettingsField } from './group-bodies.js';

/** A group's invite link as GroupInfo shows it; `null` when the instance may not read it (not an admin). */
export interface GroupInvite {
  inviteCode: string | null;
  inviteLink: string | null;
}

export const NO_INVITE: GroupInvite = { inviteCode: null, inviteLink: null };

export const inviteOf = (inviteCode: string): GroupInvite => ({
  inviteCode,
  inviteLink: `${INVITE_LINK_PREFIX}${inviteCode}`,
});

/** A group: our fields, and the hosted product's GroupInfo and GroupDetail names beside them. */
export function groupView(g: GroupDetails, withMembers = true, invite: GroupInvite = NO_INVITE) {
  const members = withMembers ? g.members : [];
  return {
    groupJid: g.jid,
    subject: g.subject,
    description: g.description,
    pictureUrl: g.pictureUrl,
    owner: g.ownerJid,
    createdAt: g.createdAt === null ? null : new Date(g.createdAt).toISOString(),
    settings: g.settings,
    memberCount: g.members.length,
    members,
    communityJid: g.communityJid,
    name: g.subject,
    jid: g.jid,
    inviteCode: invite.inviteCode,
    inviteLink: invite.inviteLink,
    image: g.pictureUrl,
    createdBy: g.ownerJid,
    participantCount: g.members.length,
    participants: members,
    groupSettings: hostedPermissions(g),
    isDefaultSubGroup: false,
  };
}

/** GroupPermissions as the hosted product names them. */
function hostedPermissions(g: GroupDetails) {
  return {
    membersCanEditInfo: !g.settings.locked,
    membersCanSendMessages: !g.settings.announce,
    membersCanAddOthers: g.settings.memberAdd,
    requireAdminApproval: g.settings.joinApproval,
  };
}

/** The hosted product's GroupInfo (and GroupDetail) fields, at the top level of an answer as it gives them. */
export function hostedGroup(v: ReturnType<typeof groupView>) {
  return {
    name: v.name,
    jid: v.jid,
    description: v.description,
    inviteCode: v.inviteCode,
    inviteLink: v.inviteLink,
    image: v.image,
    createdBy: v.createdBy,
    createdAt: v.createdAt,
    participantCount: v.participantCount,
    participants: v.participants,
    groupSettings: v.groupSettings,
    isDefaultSubGroup: v.isDefaultSubGroup,
  };
}

/** `groupSettings` as our `announce`, `locked`, `memberAdd` and `joinApproval`. */
export function settingsOf(s: z.infer<typeof groupSettingsField>) {
  return {
    ...(s?.membersCanSendMessages !== undefined ? { announce: !s.membersCanSendMessages } : {}),
    ...(s?.membersCanEditInfo !== undefined ? { locked: !s.membersCanEditInfo } : {}),
    ...(s?.membersCanAddOthers !== undefined ? { memberAdd: s.membersCanAddOthers } : {}),
    ...(s?.requireAdminApproval !== undefined ? { joinApproval: s.requireAdminApproval } : {}),
  };
}

export const linkAnswer = (message: string, groupJid: string, inviteCode: string) => ({
  success: true,
  message,
  groupJid,
  ...inviteOf(inviteCode),
});

export const GROUP_ANSWER =
  '`{group: {groupJid, subject, description, pictureUrl, owner, createdAt, settings: {announce, locked, memberAdd, joinApproval}, memberCount, members: [{jid, isAdmin, isSuperAdmin}], communityJid}}` and GroupInfo at the top level (`name, jid, description, inviteCode, inviteLink` (null when not an admin), `createdBy, participantCount, participants, groupSettings`)';
export const LINK_ANSWER = `\`{inviteCode, inviteLink: "${INVITE_LINK_PREFIX}<code>"}\``;
