import { createHash } from 'node:crypto';
import type { Logger } from 'pino';
import {
  AppError,
  ErrorCode,
  InternalError,
  MediaUploadError,
  NotFoundError,
  StoreUnavailableError,
  TimeoutError,
  isNotConnected,
  isOwnershipLoss,
  reasonOf,
} from '../errors.js';
import type { MessageContent, MsgNetSession, OutgoingMedia, SendOptions, StatusPost } from '../msgnet/msgnet-driver.js';
import { newMessageId } from '../msgnet/message-id.js';
import { PROFILE_NAMESPACE } from '../store/namespaces.js';
import type { InstanceRecord } from '../store/records.js';
import type { ProfileField, SendCommon, WireContent, WireMedia } from './actor-calls.js';
import type { ActorContext, CallHandlers } from './instance-actor.js';
import { applyEdit, remember } from './message-history.js';

/** What the network operations need from the messaging behaviour that runs them. */
export interface NetworkHost {
  session(): MsgNetSession;
  instance(): InstanceRecord;
  /** Updates the push name the instance caches (`connection.profileName`), in order with network events. */
  setProfileName(name: string): Promise<void>;
  /** Names the client's label of a message about to be sent: its outgoing message.exchange carries it. */
  labelSource(messageId: string, source: string): void;
  log(): Logger;
}

/** Errors that mean something other than "the network refused": they reach the client as they are. */
const passesThrough = (err: unknown): err is AppError =>
  isNotConnected(err) || isOwnershipLoss(err) || err instanceof TimeoutError || err instanceof StoreUnavailableError;

/** Runs a network call; a refusal becomes the endpoint's 500 message (`failed to set profile name: <reason>`). */
async function attempt<T>(what: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (passesThrough(err)) throw err;
    throw new InternalError(`${what}: ${reasonOf(err)}`, { cause: err });
  }
}

/** For the call endpoints, whose 500 is the bare failure reason; AppErrors (503 unsupported…) keep theirs. */
async function bare<T>(fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new InternalError(reasonOf(err), { cause: err });
  }
}

export function outgoingMedia(m: WireMedia): OutgoingMedia {
  return {
    kind: m.kind,
    data: Buffer.from(m.base64, 'base64'),
    mimetype: m.mimetype,
    ...(m.fileName ? { fileName: m.fileName } : {}),
    ...(m.caption ? { caption: m.caption } : {}),
    ...(m.ptt !== undefined ? { ptt: m.ptt } : {}),
    ...(m.seconds !== undefined ? { seconds: m.seconds } : {}),
    ...(m.waveform ? { waveform: Uint8Array.from(m.waveform) } : {}),
  };
}

export function fromWire(content: WireContent): MessageContent {
  switch (content.kind) {
    case 'buttons':
    case 'forward': {
      const { media, ...rest } = content;
      return { ...rest, ...(media ? { media: outgoingMedia(media) } : {}) };
    }
    case 'carousel':
      return {
        ...content,
        cards: content.cards.map(({ media, ...card }) => ({
          ...card,
          ...(media ? { media: outgoingMedia(media) } : {}),
        })),
      };
    default:
      return content;
  }
}

/** How the history shows a sent kind: its type and its text. */
function historyOf(content: MessageContent): { type: string; text: string } {
  switch (content.kind) {
    case 'contacts':
      return { type: 'contact', text: content.contacts.map((c) => c.fullName).join(', ') };
    case 'buttons':
    case 'list':
      return { type: 'interactive', text: content.text };
    case 'carousel':
      return { type: 'interactive', text: content.text ?? content.cards[0]?.body ?? '' };
    case 'poll':
      return { type: 'poll', text: content.question };
    case 'pix':
      return { type: 'payment', text: '' };
    case 'event':
      return { type: 'event', text: content.event.name };
    case 'reaction':
      return { type: 'reaction', text: content.emoji };
    case 'edit':
      return { type: 'edit', text: content.text };
    case 'forward':
      return { type: content.media?.kind ?? 'text', text: content.text };
  }
}

/** The status table of spec 7: not connected stays as it is (the route answers 503), the rest get their code. */
function statusFailure(err: unknown, withMedia: boolean): Error {
  if (passesThrough(err) || err instanceof MediaUploadError) return err;
  // Drivers that do not type their upload failures (Baileys: "Media upload failed on all hosts").
  if (withMedia && /upload/i.test(reasonOf(err))) return new MediaUploadError({ cause: err });
  return new AppError(ErrorCode.SendFailed, `Failed to send status: ${reasonOf(err)}`, { cause: err });
}

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The profile values last applied, to tell which fields a change really changed. */
async function lastApplied(ctx: ActorContext): Promise<Map<string, string>> {
  return ctx.store.ownedState.list(ctx.instanceId, PROFILE_NAMESPACE);
}

/**
 * The network operations of spec 4.2 to 4.6 and the message endpoints, as actor calls. Each runs on the
 * owner node as one turn; media arrive already validated and converted by the edge.
 */
export function networkHandlers(hostOf: (ctx: ActorContext) => NetworkHost): CallHandlers {
  const sent = async (
    ctx: ActorContext,
    to: string,
    text: string,
    result: { messageId: string; timestamp: number },
    media?: OutgoingMedia,
    type = media?.kind ?? 'text',
    source?: string,
  ) => {
    const host = hostOf(ctx);
    const me = host.session().numberJid ?? '';
    const meta = media
      ? {
          kind: media.kind,
          mimetype: media.mimetype,
          size: media.data.length,
          ...(media.fileName ? { fileName: media.fileName } : {}),
        }
      : undefined;
    await remember(
      ctx.store,
      {
        instanceId: ctx.instanceId,
        id: result.messageId,
        chatJid: to,
        fromMe: true,
        senderJid: me,
        timestamp: result.timestamp,
        type,
        text,
        media: meta,
        ...(source !== undefined ? { source } : {}),
      },
      host.log(),
    );
  };

  /** A send's options: the quote, and an id chosen now when the client labels the message. */
  const optionsOf = (ctx: ActorContext, common: SendCommon, extra: SendOptions = {}): SendOptions => {
    const options: SendOptions = { ...extra, ...(common.replyTo ? { replyTo: common.replyTo } : {}) };
    if (common.source !== undefined) {
      options.messageId = newMessageId();
      hostOf(ctx).labelSource(options.messageId, common.source);
    }
    return options;
  };

  return {
    'msgnet.sendText': async (ctx, { to, text, replyTo, mentions, mentionAll, source, linkPreview }) => {
      const mentioned = new Set(mentions ?? []);
      if (mentionAll) {
        const group = (await hostOf(ctx).session().listGroups(true)).find((g) => g.jid === to);
        if (!group) throw new NotFoundError('Group not found');
        for (const member of group.members ?? []) mentioned.add(member.jid);
      }
      const options = optionsOf(
        ctx,
        { to, ...(replyTo ? { replyTo } : {}), ...(source !== undefined ? { source } : {}) },
        { ...(mentioned.size > 0 ? { mentions: [...mentioned] } : {}), ...(linkPreview ? { linkPreview } : {}) },
      );
      const result = await attempt('Failed to send the message', () =>
        hostOf(ctx).session().sendText(to, text, options),
      );
      await sent(ctx, to, text, result, undefined, 'text', source);
      return result;
    },
    'msgnet.sendLocation': async (ctx, { location, ...common }) => {
      const { to } = common;
      const result = await attempt('Failed to send the message', () =>
        hostOf(ctx).session().sendLocation(to, location, optionsOf(ctx, common)),
      );
      await sent(ctx, to, location.name ?? '', result, undefined, 'location', common.source);
      return result;
    },
    'msgnet.sendMedia': async (ctx, { media, ...common }) => {
      const { to } = common;
      const outgoing = outgoingMedia(media);
      const result = await attempt('Failed to send the message', () =>
        hostOf(ctx).session().sendMedia(to, outgoing, optionsOf(ctx, common)),
      );
      await sent(ctx, to, media.caption ?? '', result, outgoing, outgoing.kind, common.source);
      return result;
    },
    'msgnet.send': async (ctx, { content: wire, ...common }) => {
      const { to } = common;
      const content = fromWire(wire);
      const result = await attempt('Failed to send the message', () =>
        hostOf(ctx).session().sendContent(to, content, optionsOf(ctx, common)),
      );
      const { type, text } = historyOf(content);
      const media = content.kind === 'forward' ? content.media : undefined;
      await sent(ctx, to, text, result, media, type, common.source);
      if (content.kind === 'edit') {
        await applyEdit(ctx.store, ctx.instanceId, content.target.id, content.text, hostOf(ctx).log());
      }
      return result;
    },
    'msgnet.deleteMessage': async (ctx, { chatJid, messageId, fromMe }) => {
      await attempt('Failed to delete the message', () =>
        hostOf(ctx).session().deleteMessage(chatJid, messageId, fromMe),
      );
      await ctx.store.messages
        .delete(ctx.instanceId, messageId)
        .catch((err: unknown) =>
          hostOf(ctx).log().warn({ err, messageId }, 'could not drop a deleted message from the history'),
        );
      return { deleted: true };
    },
    'msgnet.presence': async (ctx, { to, state }) => {
      await attempt('Failed to send the chat presence', () => hostOf(ctx).session().sendChatPresence(to, state));
      return { sent: true };
    },
    'msgnet.lookup': async (ctx, { number }) =>
      attempt('Failed to look the number up', () => hostOf(ctx).session().lookup(number)),
    'msgnet.profile': async (ctx, { jid }) =>
      attempt('Failed to read the profile', () => hostOf(ctx).session().getProfile(jid)),
    'groups.list': async (ctx, { includeMembers }) =>
      attempt('Failed to list groups', () => hostOf(ctx).session().listGroups(includeMembers)),
    'profile.update': async (ctx, { picture, name, status }) => {
      const session = hostOf(ctx).session();
      const known = await lastApplied(ctx);
      const updatedFields: ProfileField[] = [];
      if (picture !== undefined) {
        const bytes = picture === null ? null : Buffer.from(picture, 'base64');
        const digest = bytes ? sha256(bytes) : 'none';
        await attempt('failed to set profile picture', () => session.updateProfile({ picture: bytes }));
        if (known.get('picture') !== digest) updatedFields.push('profilePicture');
        await ctx.writeOwned([{ namespace: PROFILE_NAMESPACE, key: 'picture', value: digest }]);
      }
      if (name !== undefined) {
        await attempt('failed to set profile name', () => session.updateProfile({ name }));
        if (hostOf(ctx).instance().connection.profileName !== name) {
          updatedFields.push('profileName');
          await hostOf(ctx).setProfileName(name);
        }
      }
      if (status !== undefined) {
        await attempt('failed to set profile status', () => session.updateProfile({ status }));
        if (known.get('status') !== status) updatedFields.push('profileStatus');
        await ctx.writeOwned([{ namespace: PROFILE_NAMESPACE, key: 'status', value: status }]);
      }
      return { updatedFields };
    },
    'privacy.get': async (ctx) => attempt('failed to read privacy settings', () => hostOf(ctx).session().getPrivacy()),
    'privacy.update': async (ctx, { changes }) => {
      const session = hostOf(ctx).session();
      // One by one and not transactional (spec 4.3): a later failure leaves the earlier ones applied.
      for (const [field, value] of changes) {
        await attempt(`failed to update ${field} privacy`, () => session.setPrivacy(field, value));
      }
      return attempt('failed to read privacy settings', () => session.getPrivacy());
    },
    'labels.chats': async (ctx, { refresh }) =>
      attempt('failed to read chat labels', () => hostOf(ctx).session().chatLabels(refresh)),
    'labels.list': async (ctx) => {
      const session = hostOf(ctx).session();
      const onChats = await attempt('failed to read labels', () => session.chatLabels(false));
      const all = new Map((await attempt('failed to read labels', () => session.listLabels())).map((l) => [l.id, l]));
      // A label can be on a chat before its name arrived (labels.edit): still list it.
      for (const chat of onChats) for (const l of chat.labels) if (!all.has(l.id)) all.set(l.id, l);
      return [...all.values()];
    },
    'labels.assign': async (ctx, { chatJid, labelIds, add }) =>
      bare(() => hostOf(ctx).session().assignLabels(chatJid, labelIds, add)),
    'status.publish': async (ctx, payload) => {
      const session = hostOf(ctx).session();
      const media = payload.media ? outgoingMedia(payload.media) : undefined;
      const post: StatusPost = {
        type: payload.type,
        text: payload.text,
        ...(media ? { media } : {}),
        ...(payload.backgroundColor ? { backgroundColor: payload.backgroundColor } : {}),
        ...(payload.font !== undefined ? { font: payload.font } : {}),
      };
      let result;
      try {
        result = await session.publishStatus(post);
      } catch (err) {
        throw statusFailure(err, media !== undefined);
      }
      await sent(ctx, 'status@broadcast', payload.text, result, media);
      return { ...result, senderJid: session.numberJid ?? '' };
    },
    'call.offer': async (ctx, { to, seconds }) => bare(() => hostOf(ctx).session().offerCall(to, seconds)),
    'call.schedule': async (ctx, { to, card }) => {
      const session = hostOf(ctx).session();
      const link = await bare(() => session.createCallLink(card.video ? 'video' : 'audio', card.startTime));
      const message = await bare(() => session.sendEventCard(to, { ...card, joinLink: link.url }));
      return { messageId: message.messageId, token: link.token, url: link.url };
    },
  };
}
