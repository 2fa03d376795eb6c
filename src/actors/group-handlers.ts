import { reasonOf } from '../errors.js';
import type { GroupChanges } from '../msgnet/ops/group-ops.js';
import type { ActorScope } from './actor-scope.js';
import type { GroupCallMap, GroupUpdatePayload } from './group-calls.js';
import type { CallHandlers } from './instance-actor.js';
import { networkOperation } from './network-operation.js';

function changesOf(payload: GroupUpdatePayload): GroupChanges {
  const { subject, description, picture, announce, locked, memberAdd, joinApproval } = payload;
  return {
    ...(subject !== undefined ? { subject } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(picture !== undefined ? { picture: picture === null ? null : Buffer.from(picture, 'base64') } : {}),
    ...(announce !== undefined ? { announce } : {}),
    ...(locked !== undefined ? { locked } : {}),
    ...(memberAdd !== undefined ? { memberAdd } : {}),
    ...(joinApproval !== undefined ? { joinApproval } : {}),
  };
}

/** The group operations as actor calls, run on the owner node through the session's `groups`. */
export function groupHandlers(): Pick<CallHandlers<ActorScope>, keyof GroupCallMap> {
  const groups = (scope: ActorScope) => scope.session().groups;
  return {
    'groups.list': async (scope, { includeMembers }) =>
      networkOperation('Failed to list groups', () => groups(scope).list(includeMembers)),
    'groups.create': async (scope, { subject, participants, description, picture }) => {
      const created = await networkOperation('Failed to create the group', () =>
        groups(scope).create(subject, participants, description),
      );
      if (picture === undefined) return { group: created };
      try {
        await groups(scope).update(created.jid, { picture: Buffer.from(picture, 'base64') });
      } catch (err) {
        // The group exists either way: the answer says so, rather than a failure a client would retry.
        return { group: created, pictureError: reasonOf(err) };
      }
      return { group: await networkOperation('Failed to read the group', () => groups(scope).info(created.jid)) };
    },
    'groups.info': async (scope, { groupJid }) =>
      networkOperation('Failed to read the group', () => groups(scope).info(groupJid)),
    'groups.update': async (scope, payload) => {
      await networkOperation('Failed to update the group', () =>
        groups(scope).update(payload.groupJid, changesOf(payload)),
      );
      return networkOperation('Failed to read the group', () => groups(scope).info(payload.groupJid));
    },
    'groups.participants': async (scope, { groupJid, action, participants }) =>
      networkOperation('Failed to update the participants', () =>
        groups(scope).participants(groupJid, action, participants),
      ),
    'groups.inviteCode': async (scope, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to read the invite link', () => groups(scope).inviteCode(groupJid)),
    }),
    'groups.resetInvite': async (scope, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to reset the invite link', () =>
        groups(scope).resetInviteCode(groupJid),
      ),
    }),
    'groups.join': async (scope, { inviteCode }) => ({
      groupJid: await networkOperation('Failed to join the group', () => groups(scope).join(inviteCode)),
    }),
    'groups.leave': async (scope, { groupJid }) => {
      await networkOperation('Failed to leave the group', () => groups(scope).leave(groupJid));
      return { left: true };
    },
    'groups.requests': async (scope, { groupJid }) =>
      networkOperation('Failed to read the join requests', () => groups(scope).requests(groupJid)),
    'groups.answerRequests': async (scope, { groupJid, participants, approve }) =>
      networkOperation('Failed to answer the join requests', () =>
        groups(scope).answerRequests(groupJid, participants, approve),
      ),
  };
}
