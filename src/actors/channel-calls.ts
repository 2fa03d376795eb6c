import type { SentMessage } from '../msgnet/msgnet-driver.js';
import type { ChannelInfo, CommunityInfo } from '../msgnet/ops/channel-ops.js';
import type { WireMedia } from './wire-media.js';

/** Channel (newsletter) and community calls, answered on the instance's owner node (channel-handlers.ts). */
export interface ChannelCallMap {
  /** `picture`: the JPEG the edge converted, base64. */
  'channels.create': { payload: { name: string; description?: string; picture?: string }; result: ChannelInfo };
  'channels.list': { payload: Record<string, never>; result: ChannelInfo[] };
  'channels.info': { payload: { jid: string }; result: ChannelInfo };
  /** A text, or a media (converted by the edge, as the media send does) with `text` as its caption. */
  'channels.publish': { payload: { jid: string; text: string; media?: WireMedia }; result: SentMessage };
  'channels.follow': { payload: { jid: string }; result: { jid: string } };
  'channels.unfollow': { payload: { jid: string }; result: { jid: string } };
  'communities.create': {
    payload: { subject: string; description?: string; joinApproval?: boolean };
    result: CommunityInfo;
  };
  'communities.list': { payload: Record<string, never>; result: CommunityInfo[] };
  'communities.link': {
    payload: { communityJid: string; groupJid: string };
    result: { communityJid: string; groupJid: string };
  };
  'communities.unlink': {
    payload: { communityJid: string; groupJid: string };
    result: { communityJid: string; groupJid: string };
  };
}

declare module './actor-calls.js' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type -- the merge adds the calls above
  interface ActorCallMap extends ChannelCallMap {}
}
