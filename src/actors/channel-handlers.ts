import type { ChannelCallMap } from './channel-calls.js';
import type { CallHandlers } from './instance-actor.js';
import { remember } from './message-history.js';
import { outgoingMedia } from './network-handlers.js';
import type { NetworkHost } from './network-handlers.js';
import { networkOperation } from './network-operation.js';

/** The channel (newsletter) and community calls of channel-calls.ts, each one network operation on the owner. */
export function channelHandlers(host: Pick<NetworkHost, 'session' | 'log'>): Pick<CallHandlers, keyof ChannelCallMap> {
  const channels = () => host.session().channels;
  const communities = () => host.session().communities;
  return {
    'channels.create': async (_ctx, { name, description, picture }) =>
      networkOperation('Failed to create the channel', () =>
        channels().create(name, description, picture === undefined ? undefined : Buffer.from(picture, 'base64')),
      ),
    'channels.list': async () => networkOperation('Failed to list the channels', () => channels().list()),
    'channels.info': async (_ctx, { jid }) =>
      networkOperation('Failed to read the channel', () => channels().info(jid)),
    'channels.publish': async (ctx, { jid, text, media }) => {
      const outgoing = media ? outgoingMedia(media) : undefined;
      const sent = await networkOperation('Failed to publish on the channel', () =>
        channels().publish(jid, outgoing ? { text, media: outgoing } : { text }),
      );
      // Kept like every send, so the history shows the post before (or without) its echo from the network.
      await remember(
        ctx.store,
        {
          instanceId: ctx.instanceId,
          id: sent.messageId,
          chatJid: jid,
          fromMe: true,
          senderJid: host.session().numberJid ?? '',
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
        host.log(),
      );
      return sent;
    },
    'channels.follow': async (_ctx, { jid }) => {
      await networkOperation('Failed to follow the channel', () => channels().follow(jid));
      return { jid };
    },
    'channels.unfollow': async (_ctx, { jid }) => {
      await networkOperation('Failed to unfollow the channel', () => channels().unfollow(jid));
      return { jid };
    },
    'communities.create': async (_ctx, { subject, description }) =>
      networkOperation('Failed to create the community', () => communities().create(subject, description)),
    'communities.list': async () => networkOperation('Failed to list the communities', () => communities().list()),
    'communities.link': async (_ctx, { communityJid, groupJid }) => {
      await networkOperation('Failed to link the group', () => communities().linkGroup(communityJid, groupJid));
      return { communityJid, groupJid };
    },
    'communities.unlink': async (_ctx, { communityJid, groupJid }) => {
      await networkOperation('Failed to unlink the group', () => communities().unlinkGroup(communityJid, groupJid));
      return { communityJid, groupJid };
    },
  };
}
