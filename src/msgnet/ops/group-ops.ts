/** What an admin may lock: `announce` (only admins send), `locked` (only admins edit the group's info). */
export interface GroupSettings {
  announce: boolean;
  locked: boolean;
}

export interface GroupMember {
  jid: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

/** A group as `GET /api/group/info` shows it. */
export interface GroupDetails {
  jid: string;
  subject: string;
  description: string;
  pictureUrl: string | null;
  ownerJid: string | null;
  /** Unix milliseconds, when the network says. */
  createdAt: number | null;
  settings: GroupSettings;
  members: GroupMember[];
  /** The community it belongs to, if any. */
  communityJid: string | null;
}

export interface GroupChanges {
  subject?: string;
  description?: string;
  /** JPEG bytes, or null to remove the picture. */
  picture?: Buffer | null;
  announce?: boolean;
  locked?: boolean;
}

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';

/**
 * What happened to one participant of a change: `invite_sent` when their privacy refuses being added (the
 * invitation is sent to them instead); `not_member` for a remove, promote or demote of someone not in it.
 */
export type ParticipantOutcome =
  'added' | 'already_member' | 'not_on_whatsapp' | 'invite_sent' | 'removed' | 'promoted' | 'demoted' | 'not_member';

export interface ParticipantResult {
  jid: string;
  outcome: ParticipantOutcome;
}

/**
 * Groups of the linked number. Changes need admin rights: the network's refusal is a ForbiddenError; an
 * unknown group a NotFoundError; a network that does not answer a TimeoutError.
 */
export interface GroupOps {
  create(subject: string, participants: string[], description?: string): Promise<GroupDetails>;
  info(groupJid: string): Promise<GroupDetails>;
  /** Applies the fields given, in order (subject, description, picture, announce, locked). */
  update(groupJid: string, changes: GroupChanges): Promise<void>;
  participants(groupJid: string, action: ParticipantAction, jids: string[]): Promise<ParticipantResult[]>;
  inviteCode(groupJid: string): Promise<string>;
  /** Revokes the current invite link and returns the new code. */
  resetInviteCode(groupJid: string): Promise<string>;
  /** Joins through an invite code; returns the group's JID. */
  join(inviteCode: string): Promise<string>;
  leave(groupJid: string): Promise<void>;
}
