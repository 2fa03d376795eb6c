import type { OutgoingMedia, SentMessage } from '../outgoing-types.js';

/** A channel (WhatsApp calls it a newsletter). */
export interface ChannelInfo {
  jid: string;
  name: string;
  description: string;
  pictureUrl: string | null;
  subscribers: number | null;
  /** `owner` for a channel this number created, `follower` for one it follows, `none` otherwise. */
  role: 'owner' | 'follower' | 'none';
  inviteLink: string | null;
}

/** What a channel post carries: a text, or a media with its caption. */
export type ChannelPost = { text: string; media?: undefined } | { text: string; media: OutgoingMedia };

export interface ChannelOps {
  /** `picture`: JPEG bytes. */
  create(name: string, description?: string, picture?: Buffer): Promise<ChannelInfo>;
  /** Channels this number owns or follows. */
  list(): Promise<ChannelInfo[]>;
  info(jid: string): Promise<ChannelInfo>;
  /** Only the owner (or an admin) publishes: a ForbiddenError otherwise. */
  publish(jid: string, post: ChannelPost): Promise<SentMessage>;
  follow(jid: string): Promise<void>;
  unfollow(jid: string): Promise<void>;
}

export interface CommunityInfo {
  jid: string;
  subject: string;
  description: string;
  /** The groups linked to it (its announcement group included). */
  groups: { jid: string; subject: string }[];
  /** Joining asks an admin first (WhatsApp's membership approval mode). */
  joinApproval: boolean;
}

export interface CommunityOps {
  /** `joinApproval`: joining asks an admin first (set right after the community exists). */
  create(subject: string, description?: string, options?: { joinApproval?: boolean }): Promise<CommunityInfo>;
  /** Communities this number is in. */
  list(): Promise<CommunityInfo[]>;
  linkGroup(communityJid: string, groupJid: string): Promise<void>;
  unlinkGroup(communityJid: string, groupJid: string): Promise<void>;
}
