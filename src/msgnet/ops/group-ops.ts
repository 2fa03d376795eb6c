/**
 * What an admin may lock: `announce` (only admins send), `locked` (only admins edit the group's info); what
 * an admin may open: `memberAdd` (every member may add others, not only admins), `joinApproval` (joining
 * through the link waits for an admin's approval).
 */
export interface GroupSettings {
  announce: boolean;
  locked: boolean;
  memberAdd: boolean;
  joinApproval: boolean;
}

/** A new group's settings, as WhatsApp makes it when nothing else is asked. */
export const NEW_GROUP_SETTINGS: GroupSettings = {
  announce: false,
  locked: false,
  memberAdd: false,
  joinApproval: false,
};

export interface GroupMember {
  jid: string;
  isAdmin: boolean;
  isSuperAdmin: boolean;
}

/** A group as `GET /api/group/list` shows it. */
export interface GroupInfo {
  jid: string;
  name: string;
  description: string;
  creatorJid: string;
  memberCount: number;
  members?: { jid: string; isAdmin: boolean; isSuperAdmin: boolean }[];
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
  memberAdd?: boolean;
  joinApproval?: boolean;
}

export type ParticipantAction = 'add' | 'remove' | 'promote' | 'demote';

/**
 * What happened to one participant of a change: `invite_sent` when their privacy refuses being added (the
 * invitation is sent to them instead); `not_member` for a remove, promote or demote of someone not in it.
 */
export type ParticipantOutcome =
  | 'added'
  | 'already_member'
  | 'not_on_whatsapp'
  | 'invite_sent'
  | 'removed'
  | 'promoted'
  | 'demoted'
  | 'not_member'
  /** A join request answered (approve, reject), or none from that number to answer. */
  | 'approved'
  | 'rejected'
  | 'not_requested';

/** A request to join a group that needs an admin's approval. */
export interface JoinRequest {
  /** Who asked (often a `@lid`). */
  jid: string;
  /** Their phone number (digits), when the network tells it. */
  phoneNumber: string | null;
  /** Unix milliseconds, when the network tells it. */
  requestedAt: number | null;
}

export interface ParticipantResult {
  jid: string;
  outcome: ParticipantOutcome;
}

/**
 * Groups of the linked number. Changes need admin rights: the network's refusal is a ForbiddenError; an
 * unknown group a NotFoundError; a network that does not answer a TimeoutError.
 */
export interface GroupOps {
  /** The groups this number is in. */
  list(includeMembers: boolean): Promise<GroupInfo[]>;
  create(subject: string, participants: string[], description?: string): Promise<GroupDetails>;
  info(groupJid: string): Promise<GroupDetails>;
  /** Applies the fields given, in order (subject, description, picture, announce, locked, memberAdd, joinApproval). */
  update(groupJid: string, changes: GroupChanges): Promise<void>;
  participants(groupJid: string, action: ParticipantAction, jids: string[]): Promise<ParticipantResult[]>;
  inviteCode(groupJid: string): Promise<string>;
  /** Revokes the current invite link and returns the new code. */
  resetInviteCode(groupJid: string): Promise<string>;
  /** Joins through an invite code; returns the group's JID. */
  join(inviteCode: string): Promise<string>;
  leave(groupJid: string): Promise<void>;
  /** The pending requests to join (admins only). */
  requests(groupJid: string): Promise<JoinRequest[]>;
  /** Approves or rejects join requests (admins only): `approved`, `rejected` or `not_requested` each. */
  answerRequests(groupJid: string, jids: string[], approve: boolean): Promise<ParticipantResult[]>;
}
