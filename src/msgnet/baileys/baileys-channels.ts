import { ForbiddenError, NotFoundError } from '../../errors.js';
import { requireChannelJid } from '../channel-jids.js';
import type { SentMessage } from '../msgnet-driver.js';
import type { ChannelInfo, ChannelOps, ChannelPost } from '../ops/channel-ops.js';
import type { SessionStorage } from './baileys-auth-state.js';
import { refusing } from './network-refusal.js';
import { mediaContent, send } from './outgoing.js';
import type { BaileysSocket } from './socket-port.js';

/** The channels this number created or followed through the session (`channels:<jid>` → its role). */
export const CHANNEL_PREFIX = 'channels:';

type KnownRole = 'owner' | 'follower';

/** Where WhatsApp serves channel pictures from (a picture's `direct_path` is relative to it). */
const PICTURE_HOST = 'https://pps.whatsapp.net';

type Text = string | { text?: string } | undefined;

/**
 * A channel as rc14 gives it: `newsletterCreate` answers flat fields, while `newsletterMetadata` (typed
 * like it) answers the server's raw object, whose fields sit in `thread_metadata` and `viewer_metadata`.
 */
export interface RawChannel {
  id: string;
  name?: Text;
  description?: Text;
  invite?: string;
  subscribers?: number;
  picture?: { url?: string; directPath?: string; direct_path?: string };
  thread_metadata?: {
    name?: Text;
    description?: Text;
    invite?: string;
    subscribers_count?: string | number;
    picture?: { direct_path?: string };
  };
  viewer_metadata?: { role?: string };
}

const textOf = (value: Text): string | undefined => (typeof value === 'string' ? value : value?.text);

/** WhatsApp's viewer roles: an admin publishes like the owner; a guest neither owns nor follows. */
function roleOf(raw: RawChannel, known: KnownRole | undefined): ChannelInfo['role'] {
  switch (raw.viewer_metadata?.role) {
    case 'OWNER':
    case 'ADMIN':
      return 'owner';
    case 'SUBSCRIBER':
      return 'follower';
    case 'GUEST':
      return 'none';
    default:
      return known ?? 'none';
  }
}

export function channelInfo(raw: RawChannel, known?: KnownRole): ChannelInfo {
  const thread = raw.thread_metadata;
  const path = raw.picture?.directPath ?? raw.picture?.direct_path ?? thread?.picture?.direct_path;
  const subscribers =
    raw.subscribers ?? (thread?.subscribers_count !== undefined ? Number(thread.subscribers_count) : NaN);
  const invite = raw.invite ?? thread?.invite;
  return {
    jid: raw.id,
    name: textOf(raw.name) ?? textOf(thread?.name) ?? '',
    description: textOf(raw.description) ?? textOf(thread?.description) ?? '',
    pictureUrl: raw.picture?.url ?? (path ? `${PICTURE_HOST}${path}` : null),
    subscribers: Number.isFinite(subscribers) ? subscribers : null,
    role: roleOf(raw, known),
    inviteLink: invite ? `https://whatsapp.com/channel/${invite}` : null,
  };
}

/**
 * Channels through Baileys' newsletter queries. rc14 has no query that lists the channels a number
 * follows or owns, so the session keeps those it created or followed itself (`channels:<jid>`) and `list`
 * reads each of them from the network; channels followed from the phone are not listed.
 */
export class BaileysChannels implements ChannelOps {
  constructor(
    private readonly socket: () => BaileysSocket,
    private readonly storage: () => Promise<SessionStorage>,
  ) {}

  async #remember(jid: string, role: KnownRole | null): Promise<void> {
    await (await this.storage()).write(() => ({ [`${CHANNEL_PREFIX}${jid}`]: role }));
  }

  async #known(): Promise<Map<string, KnownRole>> {
    const stored = await (await this.storage()).list(CHANNEL_PREFIX);
    return new Map([...stored].map(([key, role]) => [key.slice(CHANNEL_PREFIX.length), role as KnownRole]));
  }

  async #metadata(sock: BaileysSocket, jid: string): Promise<RawChannel> {
    const raw = await refusing('read the channel', () => sock.newsletterMetadata('jid', jid));
    if (!raw) throw new NotFoundError('Channel not found');
    return raw;
  }

  async create(name: string, description?: string, picture?: Buffer): Promise<ChannelInfo> {
    const sock = this.socket();
    const created = await refusing('create the channel', () => sock.newsletterCreate(name, description));
    await this.#remember(created.id, 'owner');
    if (!picture) return channelInfo(created, 'owner');
    // The picture is already a JPEG within WhatsApp's size: sent as is, as `newsletterUpdatePicture` would.
    await refusing('set the channel picture', () =>
      sock.newsletterUpdate(created.id, { picture: picture.toString('base64') }),
    );
    // Read again for the picture's address; the channel exists either way.
    const fresh = await sock.newsletterMetadata('jid', created.id).catch(() => null);
    return channelInfo(fresh ?? created, 'owner');
  }

  async list(): Promise<ChannelInfo[]> {
    const sock = this.socket();
    const known = await this.#known();
    const channels = await Promise.all(
      [...known].map(async ([jid, role]) => {
        const raw = await refusing('read the channel', () => sock.newsletterMetadata('jid', jid));
        return raw ? channelInfo(raw, role) : undefined;
      }),
    );
    // A channel deleted, or left from the phone, is no longer this number's.
    return channels.filter((c): c is ChannelInfo => c !== undefined && c.role !== 'none');
  }

  async info(jid: string): Promise<ChannelInfo> {
    const sock = this.socket();
    const channel = requireChannelJid(jid);
    return channelInfo(await this.#metadata(sock, channel), (await this.#known()).get(channel));
  }

  async publish(jid: string, post: ChannelPost): Promise<SentMessage> {
    const sock = this.socket();
    const channel = requireChannelJid(jid);
    // WhatsApp accepts the message and drops it later when we may not post: ask first, unless we created it.
    if ((await this.#known()).get(channel) !== 'owner') {
      if (channelInfo(await this.#metadata(sock, channel)).role !== 'owner') {
        throw new ForbiddenError("Only the channel's owner can publish");
      }
    }
    const content = post.media ? mediaContent({ ...post.media, caption: post.text || undefined }) : { text: post.text };
    return refusing('publish on the channel', () => send(sock, channel, content));
  }

  async follow(jid: string): Promise<void> {
    const sock = this.socket();
    const channel = requireChannelJid(jid);
    await refusing('follow the channel', () => sock.newsletterFollow(channel));
    if ((await this.#known()).get(channel) !== 'owner') await this.#remember(channel, 'follower');
  }

  async unfollow(jid: string): Promise<void> {
    const sock = this.socket();
    const channel = requireChannelJid(jid);
    await refusing('unfollow the channel', () => sock.newsletterUnfollow(channel));
    if ((await this.#known()).get(channel) !== 'owner') await this.#remember(channel, null);
  }
}
