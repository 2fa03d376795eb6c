import { areJidsSameUser, getBinaryNodeChild } from '@whiskeysockets/baileys';
import type { BinaryNode, GroupMetadata } from '@whiskeysockets/baileys';
import { ForbiddenError, NotFoundError, TimeoutError } from '../../errors.js';
import type {
  GroupChanges,
  GroupDetails,
  GroupInfo,
  GroupOps,
  JoinRequest,
  ParticipantAction,
  ParticipantOutcome,
  ParticipantResult,
} from '../ops/group-ops.js';
import { GROUP_NOT_FOUND, INVALID_INVITE, INVITE_TEXT, PARTICIPANT_VERBS, adminOnly } from '../ops/group-texts.js';
import { toJid } from './jids.js';
import { refusing } from './network-refusal.js';
import { listGroups } from './outgoing.js';
import type { BaileysSocket } from './socket-port.js';

/** A missing picture must not hold the group's details for Baileys' default 60 s. */
const PICTURE_TIMEOUT_MS = 10_000;
/** How long an invitation sent instead of an add stays valid when WhatsApp gave no expiry (its own 3 days). */
const INVITE_VALIDITY_S = 3 * 24 * 3600;

type Answer = Awaited<ReturnType<BaileysSocket['groupParticipantsUpdate']>>[number];

/** A participant WhatsApp would not add directly: an invitation goes to them instead. */
const INVITE = 'invite';

const DONE: Record<ParticipantAction, ParticipantOutcome> = {
  add: 'added',
  remove: 'removed',
  promote: 'promoted',
  demote: 'demoted',
};

/**
 * What each per-participant status of `groupParticipantsUpdate` means (WhatsApp's IQ codes): for an add,
 * 409 already in, 403 their privacy refuses (the answer carries an invite code for them), 408 they left
 * recently (only an invitation brings them back), 400 and 404 no account; for the others 404 not in it.
 */
function outcomeOf(action: ParticipantAction, status: string): ParticipantOutcome | typeof INVITE | undefined {
  if (status === '200') return DONE[action];
  if (action === 'add') {
    if (status === '409') return 'already_member';
    if (status === '403' || status === '408') return INVITE;
    if (status === '400' || status === '404') return 'not_on_whatsapp';
    return undefined;
  }
  return status === '404' ? 'not_member' : undefined;
}

/** Baileys resolves an unanswered query with nothing (its metadata parser then finds no `<group>` node). */
function unanswered(err: unknown): boolean {
  return err instanceof Error && /missing <group> node/.test(err.message);
}

function answered<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new TimeoutError(`WhatsApp did not answer in time (${what})`);
  return value;
}

/** A change that needs admin rights: a refusal is `Only group admins can <what>`, an unknown group a 404. */
async function asAdmin<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await refusing(what, work);
  } catch (err) {
    if (err instanceof ForbiddenError) throw adminOnly(what);
    if (err instanceof NotFoundError) throw new NotFoundError(GROUP_NOT_FOUND);
    throw err;
  }
}

/** A member's call: a group we are not in (refused or unknown) is a 404, as the sandbox answers. */
async function asMember<T>(what: string, work: () => Promise<T>): Promise<T> {
  try {
    return await refusing(what, work);
  } catch (err) {
    if (err instanceof ForbiddenError || err instanceof NotFoundError) throw new NotFoundError(GROUP_NOT_FOUND);
    if (unanswered(err)) throw new TimeoutError(`WhatsApp did not answer in time (${what})`);
    throw err;
  }
}

function details(meta: GroupMetadata, pictureUrl: string | null): GroupDetails {
  return {
    jid: meta.id,
    subject: meta.subject,
    description: meta.desc ?? '',
    pictureUrl,
    // v7 may name people by LID; the phone number is beside it when known.
    ownerJid: meta.ownerPn ?? meta.owner ?? null,
    createdAt: meta.creation ? meta.creation * 1000 : null,
    settings: {
      announce: !!meta.announce,
      locked: !!meta.restrict,
      memberAdd: !!meta.memberAddMode,
      joinApproval: !!meta.joinApprovalMode,
    },
    members: meta.participants.map((p) => ({
      jid: p.phoneNumber ?? p.id,
      isAdmin: p.admin === 'admin' || p.admin === 'superadmin',
      isSuperAdmin: p.admin === 'superadmin',
    })),
    communityJid: meta.linkedParent ?? null,
  };
}

/** The invite code WhatsApp made for a contact whose privacy refused the add (`<add_request code expiration>`). */
function addRequest(node: BinaryNode | undefined): { code: string; expiration: number } | undefined {
  const attrs = getBinaryNodeChild(node, 'add_request')?.attrs;
  return attrs?.code ? { code: attrs.code, expiration: Number(attrs.expiration) || 0 } : undefined;
}

/**
 * Groups through Baileys' group queries. WhatsApp reports every change to every member (the author too)
 * as notifications, which socket-events.ts turns into `group.flow`: these calls emit nothing themselves.
 */
export class BaileysGroups implements GroupOps {
  constructor(
    private readonly socket: () => BaileysSocket,
    /** Told of every group listed (the session's group metadata cache). */
    private readonly onListed: (group: GroupMetadata) => void = () => undefined,
  ) {}

  async list(includeMembers: boolean): Promise<GroupInfo[]> {
    return listGroups(this.socket(), includeMembers, this.onListed);
  }

  async create(subject: string, participants: string[], description?: string): Promise<GroupDetails> {
    const sock = this.socket();
    const wanted = participants.map(toJid);
    const meta = await refusing('create the group', () => sock.groupCreate(subject, wanted));
    if (description) {
      await asAdmin('change the group info', () => sock.groupUpdateDescription(meta.id, description));
    }
    let group = await this.info(meta.id);
    // The creation's answer does not say whose privacy refused them: those missing get the add's invitation.
    const missing = wanted.filter((jid) => !group.members.some((m) => areJidsSameUser(m.jid, jid)));
    if (missing.length > 0) {
      const results = await this.participants(meta.id, 'add', missing);
      if (results.some((r) => r.outcome === 'added')) group = await this.info(meta.id);
    }
    return group;
  }

  async info(groupJid: string): Promise<GroupDetails> {
    const sock = this.socket();
    const meta = await asMember('read the group', () => sock.groupMetadata(groupJid));
    const pictureUrl = await sock.profilePictureUrl(groupJid, 'image', PICTURE_TIMEOUT_MS).then(
      (url) => url ?? null,
      // No picture is WhatsApp's 404; a picture that cannot be read now is left out the same way.
      () => null,
    );
    return details(meta, pictureUrl);
  }

  async update(groupJid: string, changes: GroupChanges): Promise<void> {
    const sock = this.socket();
    const info = 'change the group info';
    const settings = 'change the group settings';
    if (changes.subject !== undefined) {
      const subject = changes.subject;
      await asAdmin(info, () => sock.groupUpdateSubject(groupJid, subject));
    }
    if (changes.description !== undefined) {
      // An empty description deletes it (Baileys sends `delete="true"`).
      const description = changes.description;
      await asAdmin(info, () => sock.groupUpdateDescription(groupJid, description));
    }
    if (changes.picture === null) await asAdmin(info, () => sock.removeProfilePicture(groupJid));
    else if (changes.picture) {
      const picture = changes.picture;
      await asAdmin(info, () => sock.updateProfilePicture(groupJid, picture));
    }
    if (changes.announce !== undefined) {
      const setting = changes.announce ? 'announcement' : 'not_announcement';
      await asAdmin(settings, () => sock.groupSettingUpdate(groupJid, setting));
    }
    if (changes.locked !== undefined) {
      const setting = changes.locked ? 'locked' : 'unlocked';
      await asAdmin(settings, () => sock.groupSettingUpdate(groupJid, setting));
    }
    if (changes.memberAdd !== undefined) {
      const mode = changes.memberAdd ? 'all_member_add' : 'admin_add';
      await asAdmin(settings, () => sock.groupMemberAddMode(groupJid, mode));
    }
    if (changes.joinApproval !== undefined) {
      const mode = changes.joinApproval ? 'on' : 'off';
      await asAdmin(settings, () => sock.groupJoinApprovalMode(groupJid, mode));
    }
  }

  async participants(groupJid: string, action: ParticipantAction, jids: string[]): Promise<ParticipantResult[]> {
    const sock = this.socket();
    const wanted = jids.map(toJid);
    const verb = PARTICIPANT_VERBS[action];
    const answers = await asAdmin(verb, () => sock.groupParticipantsUpdate(groupJid, wanted, action));
    // An unanswered query yields no participant at all.
    if (answers.length === 0 && wanted.length > 0) answered(undefined, verb);
    const results: ParticipantResult[] = [];
    const invitations: { jid: string; answer: Answer }[] = [];
    for (const [i, jid] of wanted.entries()) {
      const answer =
        answers.find((a) => areJidsSameUser(a.jid, jid)) ?? (answers.length === wanted.length ? answers[i] : undefined);
      if (!answer) throw new Error(`WhatsApp did not answer for ${jid}`);
      const outcome = outcomeOf(action, String(answer.status));
      if (outcome === undefined) {
        if (answer.status === '401' || answer.status === '403') {
          throw new ForbiddenError(`WhatsApp refused to ${verb}: ${jid} (${answer.status})`);
        }
        throw new Error(`WhatsApp answered ${answer.status} for ${jid}`);
      }
      if (outcome === INVITE) invitations.push({ jid, answer });
      results.push({ jid, outcome: outcome === INVITE ? 'invite_sent' : outcome });
    }
    if (invitations.length > 0) await this.#invite(groupJid, invitations);
    return results;
  }

  /** Sends each contact an invitation (a group invite message) with its own code, else the group's link. */
  async #invite(groupJid: string, invitations: { jid: string; answer: Answer }[]): Promise<void> {
    const sock = this.socket();
    const { subject } = await asMember('read the group', () => sock.groupMetadata(groupJid));
    let groupCode: string | undefined;
    for (const { jid, answer } of invitations) {
      const request = addRequest(answer.content);
      const inviteCode = request?.code ?? (groupCode ??= await this.inviteCode(groupJid));
      const inviteExpiration = request?.expiration || Math.floor(Date.now() / 1000) + INVITE_VALIDITY_S;
      await refusing('send the invitation', () =>
        sock.sendMessage(jid, {
          groupInvite: { inviteCode, inviteExpiration, text: INVITE_TEXT, jid: groupJid, subject },
        }),
      );
    }
  }

  async inviteCode(groupJid: string): Promise<string> {
    const sock = this.socket();
    const what = 'read the invite link';
    return answered(await asAdmin(what, () => sock.groupInviteCode(groupJid)), what);
  }

  async resetInviteCode(groupJid: string): Promise<string> {
    const sock = this.socket();
    const what = 'reset the invite link';
    return answered(await asAdmin(what, () => sock.groupRevokeInvite(groupJid)), what);
  }

  async join(inviteCode: string): Promise<string> {
    const sock = this.socket();
    const what = 'join the group';
    let jid: string | undefined;
    try {
      jid = await refusing(what, () => sock.groupAcceptInvite(inviteCode));
    } catch (err) {
      // 404 unknown, 406 malformed, 410 revoked or expired.
      if (err instanceof NotFoundError || (err as { data?: unknown }).data === 410) {
        throw new NotFoundError(INVALID_INVITE);
      }
      throw err;
    }
    return answered(jid, what);
  }

  async leave(groupJid: string): Promise<void> {
    const sock = this.socket();
    await asMember('leave the group', () => sock.groupLeave(groupJid));
  }

  async requests(groupJid: string): Promise<JoinRequest[]> {
    const sock = this.socket();
    const listed = await asAdmin('view group requests', () => sock.groupRequestParticipantsList(groupJid));
    return listed.map((r) => {
      const jid = r.jid ?? '';
      const phone = r.phone_number ?? (jid.endsWith('@s.whatsapp.net') ? jid : undefined);
      const at = Number(r.request_time);
      return {
        jid,
        phoneNumber: phone ? phone.split('@')[0]!.replace(/\D/g, '') : null,
        requestedAt: Number.isFinite(at) && at > 0 ? at * 1000 : null,
      };
    });
  }

  async answerRequests(groupJid: string, jids: string[], approve: boolean): Promise<ParticipantResult[]> {
    const sock = this.socket();
    const wanted = jids.map(toJid);
    const verb = approve ? 'approve join requests' : 'reject join requests';
    const answers = await asAdmin(verb, () =>
      sock.groupRequestParticipantsUpdate(groupJid, wanted, approve ? 'approve' : 'reject'),
    );
    return wanted.map((jid, i) => {
      const answer =
        answers.find((a) => a.jid !== undefined && areJidsSameUser(a.jid, jid)) ??
        (answers.length === wanted.length ? answers[i] : undefined);
      const ok = answer !== undefined && String(answer.status) === '200';
      return { jid, outcome: ok ? (approve ? 'approved' : 'rejected') : 'not_requested' };
    });
  }
}
