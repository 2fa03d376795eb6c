import { reasonOf } from '../errors.js';
import type { GroupChanges } from '../msgnet/ops/group-ops.js';
import type { GroupUpdatePayload } from './group-calls.js';
import type { ActorContext, CallHandlers } from './instance-actor.js';
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
export function groupHandlers(hostOf: (ctx: ActorContext) => Pick<NetworkHost, 'session'>): CallHandlers {
  const groups = (ctx: ActorContext) => hostOf(ctx).session().groups;
  return {
    'groups.create': async (ctx, { subject, participants, description, picture }) => {
      const created = await networkOperation('Failed to create the group', () =>
        groups(ctx).create(subject, participants, description),
      );
      if (picture === undefined) return { group: created };
      try {
        await groups(ctx).update(created.jid, { picture: Buffer.from(picture, 'base64') });
      } catch (err) {
        // The group exists either way: the answer says so, rather than a failure a client would retry.
        return { group: created, pictureError: reasonOf(err) };
      }
      return { group: await networkOperation('Failed to read the group', () => groups(ctx).info(created.jid)) };
    },
    'groups.info': async (ctx, { groupJid }) =>
      networkOperation('Failed to read the group', () => groups(ctx).info(groupJid)),
    'groups.update': async (ctx, payload) => {
      await networkOperation('Failed to update the group', () =>
        groups(ctx).update(payload.groupJid, changesOf(payload)),
      );
      return networkOperation('Failed to read the group', () => groups(ctx).info(payload.groupJid));
    },
    'groups.participants': async (ctx, { groupJid, action, participants }) =>
      networkOperation('Failed to update the participants', () =>
        groups(ctx).participants(groupJid, action, participants),
      ),
    'groups.inviteCode': async (ctx, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to read the invite link', () => groups(ctx).inviteCode(groupJid)),
    }),
    'groups.resetInvite': async (ctx, { groupJid }) => ({
      inviteCode: await networkOperation('Failed to reset the invite link', () =>
        groups(ctx).resetInviteCode(groupJid),
      ),
    }),
    'groups.join': async (ctx, { inviteCode }) => ({
      groupJid: await networkOperation('Failed to join the group', () => groups(ctx).join(inviteCode)),
    }),
    'groups.leave': async (ctx, { groupJid }) => {
      await networkOperation('Failed to leave the group', () => groups(ctx).leave(groupJid));
      return { left: true };
    },
  };
}
