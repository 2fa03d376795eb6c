import { reasonOf } from '../errors.js';
import type { GroupChanges } from '../msgnet/ops/group-ops.js';
import type { GroupUpdatePayload } from './group-calls.js';
import type { CallHandlers } from './instance-actor.js';
import type { NetworkHost } from './network-handlers.js';
import { networkOperation } from './network-operation.js';

function changesOf({ subject, description, picture, announce, locked }: GroupUpdatePayload): GroupChanges {
  return {
    ...(subject !== undefined ? { subject } : {}),
    ...(description !== undefined ? { description } : {}),
    ...(picture !== undefined ? { picture: picture === null ? null : Buffer.from(picture, 'base64') } : {}),
    ...(announce !== undefined ? { announce } : {}),
    ...(locked !== undefined ? { locked } : {}),
  };
}

/** The group operations as actor calls, run on the owner node through the session's `groups`. */
export function groupHandlers(host: Pick<NetworkHost, 'session'>): CallHandlers {
  const groups = () => host.session().groups;
  return {
    'groups.create': async (_ctx, { subject, participants, description, picture }) => {
      const created = await networkOperation('Failed to create the group', () =>
        groups().create(subject, participants, description),
      );
      if (picture === undefined) return { group: created };
      try {
        await groups().update(created.jid, { picture: Buffer.from(picture, 'base64') });
      } catch (err) {
        // The group exists either way: the answer says so, rather than a failure a client would retry.
        return { group: created, pictureError: reasonOf(err) };
      }
      return { group: await networkOperation('Failed to read the group', () => groups().info(created.jid)) };
    },
    'groups.info': async (_ctx, { groupJid }) =>
      networkOperation('Failed to read the group', () => groups().info(groupJid)),
    'groups.update': async (_ctx, payload) => {
      await networkOperation('Failed to update the group', () => groups().update(payload.groupJid, changesOf(payload)));
      return networkOperation('Failed to read the group', () => groups().info(payload.groupJid));
    },
    'groups.participants': async (_ctx, { groupJid, action, participants }) =>
      networkOperation('Failed to update the participants', () =>
        groups().participants(groupJid, action, participants),
      ),
    'groups.inviteCode': async (_ctx, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to read the invite link', () => groups().inviteCode(groupJid)),
    }),
    'groups.resetInvite': async (_ctx, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to reset the invite link', () => groups().resetInviteCode(groupJid)),
    }),
    'groups.join': async (_ctx, { inviteCode }) => ({
      groupJid: await networkOperation('Failed to join the group', () => groups().join(inviteCode)),
    }),
    'groups.leave': async (_ctx, { groupJid }) => {
      await networkOperation('Failed to leave the group', () => groups().leave(groupJid));
      return { left: true };
    },
  };
}
