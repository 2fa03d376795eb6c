import { randomBytes, randomInt, randomUUID } from 'node:crypto';
import { ConflictError, ForbiddenError, NotFoundError, TimeoutError } from '../../errors.js';
import { requireChannelJid } from '../channel-jids.js';
import type { SentMessage } from '../msgnet-driver.js';
import type { ChannelInfo, ChannelOps, ChannelPost } from '../ops/channel-ops.js';
import type { SandboxNet, SandboxOps } from './sandbox-net.js';
import { outboxMedia } from './sandbox-phone.js';

/** How long a phone waits for a channel's owner to answer (the owner's phone is the channel's server). */
export const CHANNEL_ANSWER_MS = 5_000;

const OWNED = 'channel:';
const FOLLOWING = 'following:';

/** A channel as its owner's phone keeps it (`channel:<jid>`). */
interface OwnedChannel {
  jid: string;
  name: string;
  description: string;
  /** The JPEG, base64. */
  picture: string | null;
  invite: string;
  followers: string[];
}

/** What a phone asks a channel's owner, on the channel's JID. */
interface ChannelRequest {
  kind: 'request';
  requestId: string;
  op: 'follow' | 'unfollow' | 'info';
  channel: string;
}

/** The owner's answer, on the asking phone's JID: the channel as the asking phone sees it. */
interface ChannelAnswer {
  kind: 'answer';
  requestId: string;
  channel: ChannelInfo;
}

type ChannelWire = ChannelRequest | ChannelAnswer;

/** The channel as `viewer` sees it. */
function view(channel: OwnedChannel, owner: string, viewer: string): ChannelInfo {
  return {
    jid: channel.jid,
    name: channel.name,
    description: channel.description,
    pictureUrl: channel.picture ? `data:image/jpeg;base64,${channel.picture}` : null,
    subscribers: channel.followers.length,
    role: viewer === owner ? 'owner' : channel.followers.includes(viewer) ? 'follower' : 'none',
    inviteLink: `https://whatsapp.com/channel/${channel.invite}`,
  };
}

/**
 * The simulated network's channels. The owner's phone is the channel's only keeper (`channel:<jid>`, with
 * its followers) and listens on the channel's JID: other phones ask it there to follow, unfollow or
 * describe the channel, and it answers on the asking number. A follower keeps what it learned
 * (`following:<jid>`) and listens on the channel's JID too, where the owner's posts arrive as messages.
 */
export class SandboxChannels implements ChannelOps, SandboxOps {
  readonly #waiting = new Map<string, (channel: ChannelInfo) => void>();
  /** The owner answers one request at a time: each changes the followers it read. */
  #answering: Promise<void> = Promise.resolve();

  constructor(private readonly net: SandboxNet) {}

  async listening(): Promise<string[]> {
    const owned = await this.net.auth.list(OWNED);
    const following = await this.net.auth.list(FOLLOWING);
    return [
      ...[...owned.keys()].map((k) => k.slice(OWNED.length)),
      ...[...following.keys()].map((k) => k.slice(FOLLOWING.length)),
    ];
  }

  onWire(from: string, payload: unknown): void {
    const message = payload as ChannelWire;
    if (message.kind === 'answer') {
      this.#waiting.get(message.requestId)?.(message.channel);
    } else if (message.kind === 'request') {
      this.#answering = this.#answering.then(() => this.#answer(from, message)).catch(() => undefined);
    }
  }

  async #owned(jid: string): Promise<OwnedChannel | undefined> {
    const raw = await this.net.auth.get(`${OWNED}${jid}`);
    return raw ? (JSON.parse(raw) as OwnedChannel) : undefined;
  }

  async #following(jid: string): Promise<ChannelInfo | undefined> {
    const raw = await this.net.auth.get(`${FOLLOWING}${jid}`);
    return raw ? (JSON.parse(raw) as ChannelInfo) : undefined;
  }

  /** As the owner: applies another phone's request to a channel this phone keeps, and answers it. */
  async #answer(from: string, request: ChannelRequest): Promise<void> {
    const channel = await this.#owned(request.channel);
    if (!channel) return;
    const me = this.net.me();
    const followers = new Set(channel.followers);
    if (request.op === 'follow') followers.add(from);
    if (request.op === 'unfollow') followers.delete(from);
    if (followers.size !== channel.followers.length) {
      channel.followers = [...followers];
      await this.net.auth.set({ [`${OWNED}${channel.jid}`]: JSON.stringify(channel) });
    }
    const answer: ChannelAnswer = { kind: 'answer', requestId: request.requestId, channel: view(channel, me, from) };
    await this.net.publish(from, { t: 'ops', domain: 'channels', from: me, payload: answer });
  }

  /** Asks the channel's owner on the channel's JID, and waits for its answer. */
  async #ask(op: ChannelRequest['op'], jid: string): Promise<ChannelInfo> {
    const me = this.net.me();
    const request: ChannelRequest = { kind: 'request', requestId: randomUUID(), op, channel: jid };
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<ChannelInfo>((resolve, reject) => {
      timer = setTimeout(() => reject(new TimeoutError('WhatsApp did not answer in time')), CHANNEL_ANSWER_MS);
      this.#waiting.set(request.requestId, resolve);
    });
    try {
      const heard = await this.net.publish(jid, { t: 'ops', domain: 'channels', from: me, payload: request });
      // No phone keeps or follows the channel: the network knows no such channel.
      if (heard === 0) throw new NotFoundError('Channel not found');
      return await answered;
    } finally {
      clearTimeout(timer);
      this.#waiting.delete(request.requestId);
    }
  }

  async create(name: string, description = '', picture?: Buffer): Promise<ChannelInfo> {
    const me = this.net.me();
    this.net.failIf('channels:create');
    const channel: OwnedChannel = {
      jid: `120363${String(randomInt(10 ** 12)).padStart(12, '0')}@newsletter`,
      name,
      description,
      picture: picture ? picture.toString('base64') : null,
      invite: randomBytes(16).toString('base64url'),
      followers: [],
    };
    await this.net.auth.set({ [`${OWNED}${channel.jid}`]: JSON.stringify(channel) });
    await this.net.listen(channel.jid);
    await this.net.record({
      to: channel.jid,
      type: 'channel',
      operation: {
        name: 'create',
        channelName: name,
        description,
        ...(picture ? { pictureBytes: picture.length } : {}),
      },
    });
    return view(channel, me, me);
  }

  async list(): Promise<ChannelInfo[]> {
    const me = this.net.me();
    this.net.failIf('channels:list');
    const owned = [...(await this.net.auth.list(OWNED)).values()].map((raw) =>
      view(JSON.parse(raw) as OwnedChannel, me, me),
    );
    const following = [...(await this.net.auth.list(FOLLOWING)).values()].map((raw) => JSON.parse(raw) as ChannelInfo);
    return [...owned, ...following];
  }

  async info(jid: string): Promise<ChannelInfo> {
    const me = this.net.me();
    const channel = requireChannelJid(jid);
    this.net.failIf('channels:info');
    const owned = await this.#owned(channel);
    if (owned) return view(owned, me, me);
    return (await this.#following(channel)) ?? this.#ask('info', channel);
  }

  async publish(jid: string, post: ChannelPost): Promise<SentMessage> {
    const me = this.net.me();
    const channel = await this.#owned(requireChannelJid(jid));
    if (!channel) throw new ForbiddenError("Only the channel's owner can publish");
    if (post.media) this.net.failIf('uploadMedia');
    this.net.failIf('channels:publish');
    const media = post.media ? outboxMedia(post.media) : undefined;
    const entry = await this.net.record({
      to: channel.jid,
      type: 'channel',
      operation: { name: 'publish' },
      text: post.text,
      ...(media ? { media } : {}),
    });
    this.net.emit({
      type: 'message',
      message: {
        id: entry.messageId,
        fromMe: true,
        timestamp: entry.timestamp,
        chat: { jid: channel.jid, type: 'newsletter', name: channel.name },
        sender: { jid: me },
        type: media ? 'media' : 'text',
        text: post.text,
        ...(media ? { media } : {}),
      },
    });
    // Followers listening on the channel's JID receive it as a post of the channel.
    await this.net
      .publish(channel.jid, {
        t: 'msg',
        id: entry.messageId,
        from: me,
        pushName: channel.name,
        timestamp: entry.timestamp,
        text: post.text,
        newsletterJid: channel.jid,
        ...(media ? { media } : {}),
      })
      .catch(() => 0);
    return { messageId: entry.messageId, timestamp: entry.timestamp };
  }

  async follow(jid: string): Promise<void> {
    const channel = await this.#notOwned(jid, 'follow');
    const info = await this.#ask('follow', channel);
    await this.net.auth.set({ [`${FOLLOWING}${channel}`]: JSON.stringify({ ...info, role: 'follower' }) });
    await this.net.listen(channel);
    await this.net.record({ to: channel, type: 'channel', operation: { name: 'follow' } });
  }

  async unfollow(jid: string): Promise<void> {
    const channel = await this.#notOwned(jid, 'unfollow');
    await this.#ask('unfollow', channel);
    await this.net.auth.set({ [`${FOLLOWING}${channel}`]: null });
    await this.net.unlisten(channel);
    await this.net.record({ to: channel, type: 'channel', operation: { name: 'unfollow' } });
  }

  /** A channel another number owns: its owner neither follows nor unfollows it. */
  async #notOwned(jid: string, op: 'follow' | 'unfollow'): Promise<string> {
    this.net.me();
    const channel = requireChannelJid(jid);
    this.net.failIf(`channels:${op}`);
    if (await this.#owned(channel)) throw new ConflictError('This number owns the channel');
    return channel;
  }
}
