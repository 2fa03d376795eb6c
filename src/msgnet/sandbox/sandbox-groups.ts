import { NotFoundError, TimeoutError } from '../../errors.js';
import type { GroupAction } from '../msgnet-events.js';
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
import {
  GROUP_NOT_FOUND,
  INVALID_INVITE,
  INVITE_LINK_PREFIX,
  INVITE_TEXT,
  NO_ANSWER,
  PARTICIPANT_VERBS,
  adminOnly,
} from '../ops/group-texts.js';
import { NEW_GROUP_SETTINGS } from '../ops/group-ops.js';
import { PendingAnswers } from './pending-answers.js';
import {
  SandboxGroupBook,
  answererOf,
  detailsOf,
  isAdmin,
  mayChange,
  newGroupJid,
  roleOf,
} from './sandbox-group-book.js';
import { isSandboxGroupWire } from './sandbox-group-wire.js';
import type { SandboxGroupWire } from './sandbox-group-wire.js';
import { groupOfInviteCode, newInviteCode } from './sandbox-invite-code.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';
import { toJid } from './sandbox-phone.js';
import type { SandboxGroup } from './sandbox-wire.js';

/** How long a phone waits for another phone's answer (a join, a privacy check) before giving up. */
export const ANSWER_TIMEOUT_MS = 5_000;

/** The event each participant action makes, and the outcome of a participant it changed. */
const ACTION_EVENTS: Record<ParticipantAction, { event: GroupAction; done: ParticipantOutcome }> = {
  add: { event: 'joined', done: 'added' },
  remove: { event: 'left', done: 'removed' },
  promote: { event: 'promoted', done: 'promoted' },
  demote: { event: 'demoted', done: 'demoted' },
};

type AddOutcome = Extract<ParticipantOutcome, 'added' | 'not_on_whatsapp' | 'invite_sent'>;

const unique = (jids: string[]) => [...new Set(jids)];

/**
 * Groups as a simulated network between sandbox phones, which may live on different nodes and share only
 * pub/sub: every member phone keeps its own copy of the group and listens on the group's JID. A change is
 * checked against the acting phone's copy (admin rights), applied to it, reported there, and published
 * on the group's JID with the whole group after it; every other member stores that copy and reports the
 * same `group.flow`. An add first asks the contact's phone, whose `groupAdd` privacy answers: `all` lets
 * anyone add it, `contacts` and `contact_blacklist` refuse (the sandbox keeps no address book), and the
 * contact then gets an invitation with the group's link. A join by invite code asks on the group's JID;
 * the group's superadmin (else its first admin) answers if its phone is online, and the joiner waits
 * `ANSWER_TIMEOUT_MS` at most (none listening there: at once) before failing with a TimeoutError, as a
 * network that does not answer. A phone offline while a change is made misses it.
 */
export class SandboxGroups implements GroupOps, SandboxOps {
  readonly #book: SandboxGroupBook;
  readonly #answers = new PendingAnswers(ANSWER_TIMEOUT_MS, NO_ANSWER);
  /** Changes to the copies, one at a time: a change heard from another phone never interleaves with ours. */
  #chain: Promise<unknown> = Promise.resolve();

  constructor(private readonly net: SandboxNet) {
    this.#book = new SandboxGroupBook(net.auth);
  }

  async listening(): Promise<string[]> {
    return this.#book.jids();
  }

  onWire(from: string, payload: unknown): void {
    if (!isSandboxGroupWire(payload)) return;
    // A failure here (the session closing, ownership lost) drops the message, as a phone going offline does.
    const ignore = () => undefined;
    switch (payload.op) {
      case 'may-add':
        void this.#answerMayAdd(from, payload.requestId).catch(ignore);
        return;
      case 'answer':
        // Behind the change that came before it on the same number (the join's group is stored first).
        void this.#serial(async () => this.#answers.settle(payload.requestId, payload.ok)).catch(ignore);
        return;
      case 'join':
        void this.#serial(() => this.#answerJoin(from, payload)).catch(ignore);
        return;
      case 'change':
        void this.#serial(() => this.#heard(payload)).catch(ignore);
    }
  }

  async list(includeMembers: boolean): Promise<GroupInfo[]> {
    this.net.me();
    this.net.failIf('listGroups');
    return this.net.phone.groups(includeMembers);
  }

  async create(subject: string, participants: string[], description = ''): Promise<GroupDetails> {
    const me = this.net.me();
    this.net.failIf('groups:create');
    const jid = newGroupJid();
    const others = unique(participants.map(toJid)).filter((p) => p !== me);
    const outcomes = await this.#askToAdd(jid, others);
    const added = others.filter((p) => outcomes.get(p) === 'added');
    const group: SandboxGroup = {
      jid,
      subject,
      description,
      creatorJid: me,
      participants: [{ jid: me, admin: 'superadmin' }, ...added.map((p) => ({ jid: p, admin: null }))],
      settings: { ...NEW_GROUP_SETTINGS },
      inviteCode: newInviteCode(jid),
      createdAt: Date.now(),
      picture: null,
    };
    await this.#serial(async () => {
      await this.#book.save(group);
      await this.net.listen(jid);
      await this.#announce(group, 'joined', [me, ...added], me, added);
    });
    const results = others.map((p) => ({ jid: p, outcome: outcomes.get(p)! }));
    await this.net.record({ to: jid, type: 'group', operation: { name: 'create', subject, description, results } });
    await this.#invite(group, results);
    return detailsOf(group);
  }

  async info(groupJid: string): Promise<GroupDetails> {
    this.net.me();
    this.net.failIf('groups:info');
    const group = await this.#book.require(groupJid);
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'info' } });
    return detailsOf(group);
  }

  async update(groupJid: string, changes: GroupChanges): Promise<void> {
    const me = this.net.me();
    this.net.failIf('groups:update');
    await this.#serial(async () => {
      const group = await this.#member(groupJid, me);
      const editsInfo = [changes.subject, changes.description, changes.picture].some((c) => c !== undefined);
      // Unlocked groups let every member edit the subject, description and picture, as WhatsApp does.
      if (editsInfo && group.settings.locked && !isAdmin(group, me)) throw adminOnly('change the group info');
      const settings = [changes.announce, changes.locked, changes.memberAdd, changes.joinApproval];
      if (settings.some((s) => s !== undefined) && !isAdmin(group, me)) {
        throw adminOnly('change the group settings');
      }
      const steps: [() => void, GroupAction | undefined][] = [];
      if (changes.subject !== undefined) steps.push([() => (group.subject = changes.subject!), 'name']);
      if (changes.description !== undefined) {
        steps.push([() => (group.description = changes.description!), 'description']);
      }
      if (changes.picture !== undefined) {
        steps.push([() => (group.picture = changes.picture ? changes.picture.toString('base64') : null), undefined]);
      }
      if (changes.announce !== undefined) {
        steps.push([() => (group.settings.announce = changes.announce!), 'settings']);
      }
      if (changes.locked !== undefined) steps.push([() => (group.settings.locked = changes.locked!), 'settings']);
      if (changes.memberAdd !== undefined) {
        steps.push([() => (group.settings.memberAdd = changes.memberAdd!), 'settings']);
      }
      if (changes.joinApproval !== undefined) {
        steps.push([() => (group.settings.joinApproval = changes.joinApproval!), 'settings']);
      }
      // One change at a time, each published, as WhatsApp applies and announces them one by one.
      for (const [apply, action] of steps) {
        apply();
        await this.#book.save(group);
        await this.#announce(group, action, [], me);
      }
    });
    const { picture, ...rest } = changes;
    const shown = picture === undefined ? {} : { picture: picture === null ? null : { bytes: picture.length } };
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'update', ...rest, ...shown } });
  }

  async participants(groupJid: string, action: ParticipantAction, jids: string[]): Promise<ParticipantResult[]> {
    const me = this.net.me();
    this.net.failIf('groups:participants');
    const targets = unique(jids.map(toJid));
    const before = await this.#member(groupJid, me);
    if (!mayChange(before, me, action)) throw adminOnly(PARTICIPANT_VERBS[action]);
    const asked =
      action === 'add'
        ? await this.#askToAdd(
            groupJid,
            targets.filter((t) => roleOf(before, t) === undefined),
          )
        : new Map<string, AddOutcome>();
    const { group, results } = await this.#serial(async () => {
      const current = await this.#member(groupJid, me);
      if (!mayChange(current, me, action)) throw adminOnly(PARTICIPANT_VERBS[action]);
      const outcomes = targets.map((jid) => ({ jid, outcome: outcomeOf(current, action, jid, asked) }));
      const changed = outcomes.filter((r) => r.outcome === ACTION_EVENTS[action].done).map((r) => r.jid);
      if (changed.length > 0) {
        applyAction(current, action, changed);
        await this.#keep(current, me);
        await this.#announce(current, ACTION_EVENTS[action].event, changed, me, action === 'add' ? changed : []);
      }
      return { group: current, results: outcomes };
    });
    await this.net.record({ to: groupJid, type: 'group', operation: { name: action, results } });
    await this.#invite(group, results);
    return results;
  }

  async inviteCode(groupJid: string): Promise<string> {
    const me = this.net.me();
    this.net.failIf('groups:inviteCode');
    const group = await this.#member(groupJid, me);
    if (!isAdmin(group, me)) throw adminOnly('read the invite link');
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'inviteCode' } });
    return group.inviteCode;
  }

  async resetInviteCode(groupJid: string): Promise<string> {
    const me = this.net.me();
    this.net.failIf('groups:resetInviteCode');
    const code = await this.#serial(async () => {
      const group = await this.#member(groupJid, me);
      if (!isAdmin(group, me)) throw adminOnly('reset the invite link');
      group.inviteCode = newInviteCode(groupJid);
      await this.#book.save(group);
      await this.#announce(group, undefined, [], me);
      return group.inviteCode;
    });
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'resetInviteCode' } });
    return code;
  }

  async join(inviteCode: string): Promise<string> {
    this.net.me();
    this.net.failIf('groups:join');
    const groupJid = groupOfInviteCode(inviteCode);
    if (!groupJid) throw new NotFoundError(INVALID_INVITE);
    if (!(await this.#book.get(groupJid))) {
      const { requestId, answer } = this.#answers.open();
      const heard = await this.#publish(groupJid, { op: 'join', requestId, groupJid, code: inviteCode });
      if (heard === 0) {
        this.#answers.cancel(requestId);
        throw new TimeoutError(NO_ANSWER);
      }
      if (!(await answer)) throw new NotFoundError(INVALID_INVITE);
    }
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'join', inviteCode } });
    return groupJid;
  }

  async leave(groupJid: string): Promise<void> {
    const me = this.net.me();
    this.net.failIf('groups:leave');
    await this.#serial(async () => {
      const group = await this.#member(groupJid, me);
      group.participants = group.participants.filter((p) => p.jid !== me);
      await this.#keep(group, me);
      await this.#announce(group, 'left', [me], me);
    });
    await this.net.record({ to: groupJid, type: 'group', operation: { name: 'leave' } });
  }

  /** The sandbox models no join approval: no request is ever pending (admins only, as on WhatsApp). */
  async requests(groupJid: string): Promise<JoinRequest[]> {
    const me = this.net.me();
    this.net.failIf('groups:requests');
    if (!isAdmin(await this.#member(groupJid, me), me)) throw adminOnly('view group requests');
    return [];
  }

  async answerRequests(groupJid: string, jids: string[]): Promise<ParticipantResult[]> {
    const me = this.net.me();
    this.net.failIf('groups:answerRequests');
    if (!isAdmin(await this.#member(groupJid, me), me)) throw adminOnly('answer join requests');
    return unique(jids.map(toJid)).map((jid) => ({ jid, outcome: 'not_requested' as const }));
  }

  // ---- between phones ------------------------------------------------------------------------

  #serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.#chain.then(work);
    this.#chain = run.catch(() => undefined);
    return run;
  }

  async #member(groupJid: string, me: string): Promise<SandboxGroup> {
    const group = await this.#book.require(groupJid);
    if (roleOf(group, me) === undefined) throw new NotFoundError(GROUP_NOT_FOUND);
    return group;
  }

  #publish(to: string, payload: SandboxGroupWire): Promise<number> {
    return this.net.publish(to, { t: 'ops', domain: 'groups', from: this.net.me(), payload });
  }

  /** Stores our copy while we are in the group; drops it and stops listening once we are not. */
  async #keep(group: SandboxGroup, me: string): Promise<void> {
    if (roleOf(group, me) !== undefined) {
      await this.#book.save(group);
      return;
    }
    await this.#book.drop(group.jid);
    await this.net.unlisten(group.jid);
  }

  /** Reports a change here and publishes it to the other members (and to the numbers of `newcomers`). */
  async #announce(
    group: SandboxGroup,
    action: GroupAction | undefined,
    participants: string[],
    author: string,
    newcomers: string[] = [],
  ): Promise<void> {
    const timestamp = Date.now();
    if (action) this.#report(group, action, participants, author, timestamp);
    const change: SandboxGroupWire = { op: 'change', group: structuredClone(group), participants, author, timestamp };
    if (action) change.action = action;
    if (group.participants.length > 0) await this.#publish(group.jid, change);
    // The last member gone: the group is no more.
    else if (action) this.#report(group, 'delete', [], author, timestamp);
    // After the group's JID, so that a newcomer, who listens there once told, never hears it twice.
    for (const newcomer of newcomers) await this.#publish(newcomer, change);
  }

  #report(group: SandboxGroup, action: GroupAction, participants: string[], author: string, timestamp: number): void {
    this.net.emit({
      type: 'group',
      groupJid: group.jid,
      action,
      participants: participants.map((jid) => ({ jid })),
      groupName: group.subject,
      author,
      timestamp,
    });
  }

  /** Another member's change: our copy follows it (or goes, once we are out), and we report it too. */
  async #heard(change: Extract<SandboxGroupWire, { op: 'change' }>): Promise<void> {
    const me = this.net.me();
    const { group } = change;
    const mine = await this.#book.get(group.jid);
    if (roleOf(group, me) !== undefined) {
      await this.#book.save(group);
      if (!mine) await this.net.listen(group.jid);
    } else if (mine) {
      await this.#book.drop(group.jid);
      await this.net.unlisten(group.jid);
    } else {
      return;
    }
    if (change.action) this.#report(group, change.action, change.participants, change.author, change.timestamp);
  }

  /** Asks each contact's phone whether we may add it; nobody listening on its number: not on WhatsApp. */
  async #askToAdd(groupJid: string, jids: string[]): Promise<Map<string, AddOutcome>> {
    const outcomes = await Promise.all(
      jids.map(async (jid): Promise<[string, AddOutcome]> => {
        const { requestId, answer } = this.#answers.open();
        if ((await this.#publish(jid, { op: 'may-add', requestId, groupJid })) === 0) {
          this.#answers.cancel(requestId);
          return [jid, 'not_on_whatsapp'];
        }
        return [jid, (await answer) ? 'added' : 'invite_sent'];
      }),
    );
    return new Map(outcomes);
  }

  async #answerMayAdd(asker: string, requestId: string): Promise<void> {
    const { groupAdd } = await this.net.phone.privacy();
    await this.#publish(asker, { op: 'answer', requestId, ok: groupAdd === 'all' });
  }

  /** A join request heard on a group's JID: only the member who answers for the group does. */
  async #answerJoin(joiner: string, request: Extract<SandboxGroupWire, { op: 'join' }>): Promise<void> {
    const me = this.net.me();
    const group = await this.#book.get(request.groupJid);
    if (!group || answererOf(group) !== me) return;
    const valid = request.code === group.inviteCode;
    if (valid && roleOf(group, joiner) === undefined) {
      group.participants.push({ jid: joiner, admin: null });
      await this.#book.save(group);
      await this.#announce(group, 'joined', [joiner], joiner, [joiner]);
    }
    await this.#publish(joiner, { op: 'answer', requestId: request.requestId, ok: valid });
  }

  /** Invitations to those whose privacy refused the add: a message with the group's link. */
  async #invite(group: SandboxGroup, results: ParticipantResult[]): Promise<void> {
    const me = this.net.me();
    for (const { jid } of results.filter((r) => r.outcome === 'invite_sent')) {
      const text = `${INVITE_TEXT}: ${INVITE_LINK_PREFIX}${group.inviteCode}`;
      const entry = await this.net.record({
        to: jid,
        type: 'group_invite',
        text,
        groupInvite: { groupJid: group.jid, subject: group.subject, inviteCode: group.inviteCode },
      });
      await this.net.publish(jid, { t: 'msg', id: entry.messageId, from: me, timestamp: entry.timestamp, text });
    }
  }
}

/** What an action does to one participant, against the group as it is now. */
function outcomeOf(
  group: SandboxGroup,
  action: ParticipantAction,
  jid: string,
  asked: Map<string, AddOutcome>,
): ParticipantOutcome {
  const member = roleOf(group, jid) !== undefined;
  if (action === 'add') return member ? 'already_member' : (asked.get(jid) ?? 'not_on_whatsapp');
  return member ? ACTION_EVENTS[action].done : 'not_member';
}

function applyAction(group: SandboxGroup, action: ParticipantAction, jids: string[]): void {
  const set = new Set(jids);
  if (action === 'add') group.participants.push(...jids.map((jid) => ({ jid, admin: null })));
  else if (action === 'remove') group.participants = group.participants.filter((p) => !set.has(p.jid));
  else {
    for (const p of group.participants) {
      if (!set.has(p.jid)) continue;
      if (action === 'demote') p.admin = null;
      else if (p.admin === null) p.admin = 'admin';
    }
  }
}
