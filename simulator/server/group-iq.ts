import { randomBytes } from 'node:crypto';
import type { BinaryNode } from '@whiskeysockets/baileys';
import type { Account } from './directory.js';
import { isAdmin, newInviteCode } from './group-book.js';
import type { Group } from './group-book.js';
import type { IqContext } from './iq-handlers.js';
import { child, children, childrenOf, iqError, iqResult, textOf, unixNow } from './stanzas.js';

/** The `<group>` node WhatsApp answers metadata queries with (Baileys' extractGroupMetadata reads it). */
export function groupNode(group: Group): BinaryNode {
  const content: BinaryNode[] = [];
  if (group.description) {
    content.push({
      tag: 'description',
      attrs: {
        id: group.description.id,
        participant: group.description.owner.pnJid,
        t: String(group.description.time),
      },
      content: [{ tag: 'body', attrs: {}, content: Buffer.from(group.description.text, 'utf8') }],
    });
  }
  for (const [account, role] of group.members) {
    content.push({
      tag: 'participant',
      attrs: { jid: account.pnJid, lid: account.lidJid, ...(role === 'member' ? {} : { type: role }) },
    });
  }
  if (group.announce) content.push({ tag: 'announcement', attrs: {} });
  if (group.locked) content.push({ tag: 'locked', attrs: {} });
  if (group.ephemeral) content.push({ tag: 'ephemeral', attrs: { expiration: String(group.ephemeral) } });
  content.push({ tag: 'member_add_mode', attrs: {}, content: Buffer.from(group.memberAddMode) });
  if (group.joinApproval) {
    content.push({
      tag: 'membership_approval_mode',
      attrs: {},
      content: [{ tag: 'group_join', attrs: { state: 'on' } }],
    });
  }
  return {
    tag: 'group',
    attrs: {
      id: group.jid.split('@')[0]!,
      subject: group.subject,
      s_o: group.subjectOwner.pnJid,
      s_t: String(group.subjectTime),
      creation: String(group.creation),
      creator: group.creator.pnJid,
      size: String(group.members.size),
      addressing_mode: 'pn',
    },
    content,
  };
}

/**
 * Tells every member (and, for removals, whoever left) what changed, as `w:gp2` notifications
 * queued like any stanza. `extra` receivers are accounts no longer members that must hear it.
 */
function notifyGroup(ctx: IqContext, group: Group, change: BinaryNode, extra: Account[] = []): void {
  const actor = ctx.device.account;
  const receivers = new Set<Account>([...group.members.keys(), ...extra]);
  const id = randomBytes(8).toString('hex').toUpperCase();
  for (const account of receivers) {
    for (const device of account.linkedDevices()) {
      ctx.core.queues.deliver(device, {
        tag: 'notification',
        attrs: {
          id,
          from: group.jid,
          type: 'w:gp2',
          participant: actor.pnJid,
          participant_pn: actor.pnJid,
          t: unixNow(),
          notify: actor.pushName,
        },
        content: [change],
      });
    }
  }
}

function participantsNode(tag: string, accounts: Account[], group?: Group): BinaryNode {
  return {
    tag,
    attrs: {},
    content: accounts.map((a) => {
      const role = group?.members.get(a);
      return {
        tag: 'participant',
        attrs: { jid: a.pnJid, lid: a.lidJid, ...(role && role !== 'member' ? { type: role } : {}) },
      };
    }),
  };
}

/** Answers `w:g2`: create, metadata, participating, membership, subject, description, settings, invites. */
export function groupIq(ctx: IqContext, iq: BinaryNode): BinaryNode {
  const me = ctx.device.account;
  const to = iq.attrs.to ?? '';
  const [op] = children(iq);
  if (!op) return iqError(iq, 400, 'bad-request');
  const { core } = ctx;

  if (to === '@g.us' || to === 'g.us') {
    switch (op.tag) {
      case 'participating':
        return iqResult(iq, [{ tag: 'groups', attrs: {}, content: core.groups.of(me).map(groupNode) }]);
      case 'create': {
        const members = childrenOf(op, 'participant')
          .map((p) => core.directory.account(p.attrs.jid))
          .filter((a): a is Account => a !== undefined);
        const group = core.groups.create(op.attrs.subject ?? '', me, members);
        notifyGroup(ctx, group, { tag: 'create', attrs: {}, content: [groupNode(group)] });
        return iqResult(iq, [groupNode(group)]);
      }
      case 'leave': {
        for (const g of childrenOf(op, 'group')) {
          const group = core.groups.get(g.attrs.id);
          if (!group?.members.has(me)) continue;
          group.members.delete(me);
          notifyGroup(ctx, group, participantsNode('remove', [me]), [me]);
        }
        return iqResult(iq);
      }
      case 'invite': {
        const group = op.attrs.code ? core.groups.byInvite(op.attrs.code) : undefined;
        if (!group) return iqError(iq, 404, 'item-not-found');
        if (iq.attrs.type === 'get') return iqResult(iq, [groupNode(group)]);
        if (!group.members.has(me)) {
          if (group.joinApproval) {
            group.requests.set(me, Math.floor(Date.now() / 1000));
            return iqError(iq, 409, 'membership-request-pending');
          }
          group.members.set(me, 'member');
          notifyGroup(ctx, group, participantsNode('add', [me]));
        }
        return iqResult(iq, [{ tag: 'group', attrs: { jid: group.jid } }]);
      }
      default:
        return iqError(iq, 501, 'feature-not-implemented');
    }
  }

  const group = core.groups.get(to);
  if (!group) return iqError(iq, 404, 'item-not-found');
  const member = group.members.has(me);
  const admin = isAdmin(group, me);
  if (iq.attrs.type === 'get') {
    if (op.tag === 'query') return member ? iqResult(iq, [groupNode(group)]) : iqError(iq, 403, 'forbidden');
    if (op.tag === 'invite') {
      return admin
        ? iqResult(iq, [{ tag: 'invite', attrs: { code: group.inviteCode } }])
        : iqError(iq, 401, 'not-authorized');
    }
    if (op.tag === 'membership_approval_requests') {
      if (!admin) return iqError(iq, 401, 'not-authorized');
      return iqResult(iq, [
        {
          tag: 'membership_approval_requests',
          attrs: {},
          content: [...group.requests].map(([a, t]) => ({
            tag: 'membership_approval_request',
            attrs: { jid: a.pnJid, request_time: String(t), request_method: 'invite_link' },
          })),
        },
      ]);
    }
    return iqError(iq, 501, 'feature-not-implemented');
  }
  if (!member) return iqError(iq, 403, 'forbidden');
  const adminOnly = group.locked || op.tag !== 'subject';
  if (adminOnly && !admin && !(op.tag === 'add' && group.memberAddMode === 'all_member_add')) {
    return iqError(iq, 401, 'not-authorized');
  }
  switch (op.tag) {
    case 'add':
    case 'remove':
    case 'promote':
    case 'demote':
      return iqResult(iq, [membership(ctx, group, op)]);
    case 'subject': {
      group.subject = textOf(op) ?? '';
      group.subjectOwner = me;
      group.subjectTime = Math.floor(Date.now() / 1000);
      notifyGroup(ctx, group, {
        tag: 'subject',
        attrs: { subject: group.subject, s_o: me.pnJid, s_t: String(group.subjectTime) },
      });
      return iqResult(iq);
    }
    case 'description': {
      const text = textOf(child(op, 'body'));
      group.description =
        op.attrs.delete === 'true' || !text
          ? undefined
          : { id: op.attrs.id ?? randomBytes(8).toString('hex'), text, owner: me, time: Math.floor(Date.now() / 1000) };
      notifyGroup(ctx, group, {
        tag: 'description',
        attrs: group.description ? { id: group.description.id } : { delete: 'true' },
        ...(group.description
          ? { content: [{ tag: 'body', attrs: {}, content: Buffer.from(group.description.text) }] }
          : {}),
      });
      return iqResult(iq);
    }
    case 'announcement':
    case 'not_announcement':
      group.announce = op.tag === 'announcement';
      notifyGroup(ctx, group, { tag: op.tag, attrs: {} });
      return iqResult(iq);
    case 'locked':
    case 'unlocked':
      group.locked = op.tag === 'locked';
      notifyGroup(ctx, group, { tag: op.tag, attrs: {} });
      return iqResult(iq);
    case 'ephemeral':
    case 'not_ephemeral':
      group.ephemeral = op.tag === 'ephemeral' ? Number(op.attrs.expiration ?? 0) : 0;
      notifyGroup(ctx, group, { tag: op.tag, attrs: op.attrs });
      return iqResult(iq);
    case 'member_add_mode': {
      const mode = textOf(op);
      if (mode !== 'admin_add' && mode !== 'all_member_add') return iqError(iq, 400, 'bad-request');
      group.memberAddMode = mode;
      notifyGroup(ctx, group, { tag: 'member_add_mode', attrs: {}, content: Buffer.from(mode) });
      return iqResult(iq);
    }
    case 'membership_approval_mode': {
      group.joinApproval = child(op, 'group_join')?.attrs.state === 'on';
      notifyGroup(ctx, group, op);
      return iqResult(iq);
    }
    case 'membership_requests_action': {
      const [action] = children(op);
      if (!action || (action.tag !== 'approve' && action.tag !== 'reject')) return iqError(iq, 400, 'bad-request');
      const done: BinaryNode[] = [];
      const approved: Account[] = [];
      for (const p of childrenOf(action, 'participant')) {
        const account = core.directory.account(p.attrs.jid);
        if (!account || !group.requests.has(account)) {
          done.push({ tag: 'participant', attrs: { jid: p.attrs.jid ?? '', error: '404' } });
          continue;
        }
        group.requests.delete(account);
        if (action.tag === 'approve') {
          group.members.set(account, 'member');
          approved.push(account);
        }
        done.push({ tag: 'participant', attrs: { jid: account.pnJid } });
      }
      if (approved.length) notifyGroup(ctx, group, participantsNode('add', approved));
      return iqResult(iq, [
        { tag: 'membership_requests_action', attrs: {}, content: [{ tag: action.tag, attrs: {}, content: done }] },
      ]);
    }
    case 'invite': {
      group.inviteCode = newInviteCode();
      notifyGroup(ctx, group, { tag: 'invite', attrs: { code: group.inviteCode } });
      return iqResult(iq, [{ tag: 'invite', attrs: { code: group.inviteCode } }]);
    }
    default:
      return iqError(iq, 501, 'feature-not-implemented');
  }
}

/** add/remove/promote/demote: one result per participant, then one notification for those it changed. */
function membership(ctx: IqContext, group: Group, op: BinaryNode): BinaryNode {
  const results: BinaryNode[] = [];
  const changed: Account[] = [];
  for (const p of childrenOf(op, 'participant')) {
    const jid = p.attrs.jid ?? '';
    const account = ctx.core.directory.account(jid);
    if (!account) {
      results.push({ tag: 'participant', attrs: { jid, error: '404' } });
      continue;
    }
    const role = group.members.get(account);
    let error: string | undefined;
    switch (op.tag) {
      case 'add':
        if (role) error = '409';
        else if (account.privacy.groupadd === 'none') error = '403';
        else group.members.set(account, 'member');
        break;
      case 'remove':
        if (!role) error = '404';
        else group.members.delete(account);
        break;
      case 'promote':
        if (!role) error = '404';
        else if (role === 'member') group.members.set(account, 'admin');
        break;
      case 'demote':
        if (!role) error = '404';
        else if (role === 'superadmin') error = '406';
        else group.members.set(account, 'member');
        break;
    }
    results.push({ tag: 'participant', attrs: { jid: account.pnJid, ...(error ? { error } : {}) } });
    if (!error) changed.push(account);
  }
  if (changed.length) {
    notifyGroup(ctx, group, participantsNode(op.tag, changed, group), op.tag === 'remove' ? changed : []);
  }
  return { tag: op.tag, attrs: {}, content: results };
}
