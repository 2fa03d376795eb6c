import type { ChannelCallMap } from './channel-calls.js';
import type { ActorContext, CallHandlers } from './instance-actor.js';
import { remember } from './message-history.js';
import { outgoingMedia } from './network-handlers.js';
import type { NetworkHost } from './network-handlers.js';
import { networkOperation } from './network-operation.js';

/** The channel (newsletter) and community calls of channel-calls.ts, each one network operation on the owner. */
export function channelHandlers(
  hostOf: (ctx: ActorContext) => Pick<NetworkHost, 'session' | 'log'>,
): Pick<CallHandlers, keyof ChannelCallMap> {
  const channels = (ctx: ActorContext) => hostOf(ctx).session().channels;
  const communities = (ctx: ActorContext) => hostOf(ctx).session().communities;
  return {
    'channels.create': async (ctx, { name, description, picture }) =>
      networkOperation('Failed to create the channel', () =>
        channels(ctx).create(name, description, picture === undefined ? undefined : Buffer.from(picture, 'base64')),
      ),
    'channels.list': async (ctx) => networkOperation('Failed to list the channels', () => channels(ctx).list()),
    'channels.info': async (ctx, { jid }) =>
      networkOperation('Failed to read the channel', () => channels(ctx).info(jid)),
    'channels.publish': async (ctx, { jid, text, media }) => {
      const outgoing = media ? outgoingMedia(media) : undefined;
      const sent = await networkOperation('Failed to publish on the channel', () =>
        channels(ctx).publish(jid, outgoing ? { text, media: outgoing } : { text }),
      );
      // Kept like every send, so the history shows the post before (or without) its echo from the network.
      await remember(
        ctx.store,
        {
          instanceId: ctx.instanceId,
          id: sent.messageId,
          chatJid: jid,
          fromMe: true,
          senderJid: hostOf(ctx).session().numberJid ?? '',
          timestamp: sent.timestamp,
          type: outgoing?.kind ?? 'text',
          text,
          media: outgoing
            ? {
                kind: outgoing.kind,
                mimetype: outgoing.mimetype,
                size: outgoing.data.length,
                ...(outgoing.fileName ? { fileName: outgoing.fileName } : {}),
              }
            : undefined,
        },
        hostOf(ctx).log(),
      );
      return sent;
    },
    'channels.follow': async (ctx, { jid }) => {
      await networkOperation('Failed to follow the channel', () => channels(ctx).follow(jid));
      return { jid };
    },
    'channels.unfollow': async (ctx, { jid }) => {
      await networkOperation('Failed to unfollow the channel', () => channels(ctx).unfollow(jid));
      return { jid };
    },
    'communities.create': async (ctx, { subject, description }) =>
      networkOperation('Failed to create the community', () => communities(ctx).create(subject, description)),
    'communities.list': async (ctx) =>
      networkOperation('Failed to list the communities', () => communities(ctx).list()),
    'communities.link': async (ctx, { communityJid, groupJid }) => {
      await networkOperation('Failed to link the group', () => communities(ctx).linkGroup(communityJid, groupJid));
      return { communityJid, groupJid };
    },
    'communities.unlink': async (ctx, { communityJid, groupJid }) => {
      await networkOperation('Failed to unlink the group', () => communities(ctx).unlinkGroup(communityJid, groupJid));
      return { communityJid, groupJid };
    },
  };
}
