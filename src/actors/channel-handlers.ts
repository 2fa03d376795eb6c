import type { ActorScope } from './actor-scope.js';
import type { ChannelCallMap } from './channel-calls.js';
import type { CallHandlers } from './instance-actor.js';
import { rememberSent } from './message-history.js';
import { networkOperation } from './network-operation.js';
import { outgoingMedia } from './wire-media.js';

/** The channel (newsletter) and community calls of channel-calls.ts, each one network operation on the owner. */
export function channelHandlers(): Pick<CallHandlers<ActorScope>, keyof ChannelCallMap> {
  const channels = (scope: ActorScope) => scope.session().channels;
  const communities = (scope: ActorScope) => scope.session().communities;
  return {
    'channels.create': async (scope, { name, description, picture }) =>
      networkOperation('Failed to create the channel', () =>
        channels(scope).create(name, description, picture === undefined ? undefined : Buffer.from(picture, 'base64')),
      ),
    'channels.list': async (scope) => networkOperation('Failed to list the channels', () => channels(scope).list()),
    'channels.info': async (scope, { jid }) =>
      networkOperation('Failed to read the channel', () => channels(scope).info(jid)),
    'channels.publish': async (scope, { jid, text, media }) => {
      const outgoing = media ? outgoingMedia(media) : undefined;
      const sent = await networkOperation('Failed to publish on the channel', () =>
        channels(scope).publish(jid, outgoing ? { text, media: outgoing } : { text }),
      );
      // Kept like every send, so the history shows the post before (or without) its echo from the network.
      const { ctx } = scope;
      await rememberSent(
        ctx.store,
        {
          instanceId: ctx.instanceId,
          chatJid: jid,
          messageId: sent.messageId,
          timestamp: sent.timestamp,
          senderJid: scope.session().numberJid ?? '',
          type: outgoing?.kind ?? 'text',
          text,
          ...(outgoing ? { media: outgoing } : {}),
        },
        ctx.log,
      );
      return sent;
    },
    'channels.follow': async (scope, { jid }) => {
      await networkOperation('Failed to follow the channel', () => channels(scope).follow(jid));
      return { jid };
    },
    'channels.unfollow': async (scope, { jid }) => {
      await networkOperation('Failed to unfollow the channel', () => channels(scope).unfollow(jid));
      return { jid };
    },
    'communities.create': async (scope, { subject, description, joinApproval }) =>
      networkOperation('Failed to create the community', () =>
        communities(scope).create(subject, description, joinApproval ? { joinApproval } : {}),
      ),
    'communities.list': async (scope) =>
      networkOperation('Failed to list the communities', () => communities(scope).list()),
    'communities.link': async (scope, { communityJid, groupJid }) => {
      await networkOperation('Failed to link the group', () => communities(scope).linkGroup(communityJid, groupJid));
      return { communityJid, groupJid };
    },
    'communities.unlink': async (scope, { communityJid, groupJid }) => {
      await networkOperation('Failed to unlink the group', () =>
        communities(scope).unlinkGroup(communityJid, groupJid),
      );
      return { communityJid, groupJid };
    },
  };
}
