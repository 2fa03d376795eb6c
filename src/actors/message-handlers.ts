import { NotFoundError, UnavailableError } from '../errors.js';
import type { ReceivedMediaPipeline } from '../events/received-media.js';
import { newMessageId } from '../msgnet/message-id.js';
import type { MessageContent, OutgoingMedia, SendOptions, SentMessage } from '../msgnet/msgnet-driver.js';
import type { ActorScope } from './actor-scope.js';
import type { CallHandlers } from './instance-actor.js';
import type { MessageCallMap, SendCommon, WireContent } from './message-calls.js';
import { applyEdit, rememberSent } from './message-history.js';
import { recordSentPoll } from './poll-tally.js';
import { networkOperation } from './network-operation.js';
import { outgoingMedia } from './wire-media.js';

const SEND_FAILED = 'Failed to send the message';

/** A kind as the session sends it: its media as bytes again. */
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
      return { type: 'payment', text: content.payment.message ?? '' };
    case 'form':
      return { type: 'interactive', text: content.form.text };
    case 'event':
      return { type: 'event', text: content.event.name };
    case 'scheduledCall':
      return { type: 'event', text: content.card.name };
    case 'reaction':
      return { type: 'reaction', text: content.emoji };
    case 'edit':
      return { type: 'edit', text: content.text };
    case 'forward':
      return { type: content.media?.kind ?? 'text', text: content.text };
  }
}

/** A send's options: the quote, and an id chosen now when the client labels the message. */
function optionsOf(scope: ActorScope, common: SendCommon, extra: SendOptions = {}): SendOptions {
  const options: SendOptions = { ...extra, ...(common.replyTo ? { replyTo: common.replyTo } : {}) };
  if (common.source !== undefined) {
    options.messageId = newMessageId();
    scope.labelSource(options.messageId, common.source);
  }
  return options;
}

/** Keeps a send in the history under the client's label. */
async function sent(
  scope: ActorScope,
  to: string,
  text: string,
  result: SentMessage,
  type: string,
  source: string | undefined,
  media?: OutgoingMedia,
): Promise<void> {
  const { ctx } = scope;
  await rememberSent(
    ctx.store,
    {
      instanceId: ctx.instanceId,
      chatJid: to,
      messageId: result.messageId,
      timestamp: result.timestamp,
      senderJid: scope.session().numberJid ?? '',
      type,
      text,
      ...(media ? { media } : {}),
      ...(source !== undefined ? { source } : {}),
    },
    ctx.log,
  );
  // Acknowledged already (its status event may still be on its way through the event chain): a client
  // reading the status right after the answer sees it sent.
  if (result.acknowledged) {
    await ctx.store.messages.setStatus(ctx.instanceId, [result.messageId], 'sent').catch((err: unknown) => {
      ctx.log.warn({ err, messageId: result.messageId }, 'could not record a message status');
    });
  }
}

export interface MessageHandlerDeps {
  /** Received files downloaded again (`media.download`); absent on a node without the media pipeline. */
  media?: ReceivedMediaPipeline;
}

/**
 * The message calls on the owner node: each send goes out through the session's `messages`, then is kept
 * in the chat history under the client's label (which its outgoing `message.exchange` carries too).
 */
export function messageHandlers(deps: MessageHandlerDeps): Pick<CallHandlers<ActorScope>, keyof MessageCallMap> {
  return {
    'msgnet.sendText': async (scope, { to, text, replyTo, mentions, mentionAll, source, linkPreview }) => {
      const mentioned = await mentionedOf(scope, to, mentions, mentionAll);
      const options = optionsOf(
        scope,
        { to, ...(replyTo ? { replyTo } : {}), ...(source !== undefined ? { source } : {}) },
        { ...(mentioned.size > 0 ? { mentions: [...mentioned] } : {}), ...(linkPreview ? { linkPreview } : {}) },
      );
      const result = await networkOperation(SEND_FAILED, () => scope.session().messages.sendText(to, text, options));
      await sent(scope, to, text, result, 'text', source);
      return result;
    },
    'msgnet.sendLocation': async (scope, { location, ...common }) => {
      const { to } = common;
      const result = await networkOperation(SEND_FAILED, () =>
        scope.session().messages.sendLocation(to, location, optionsOf(scope, common)),
      );
      await sent(scope, to, location.name ?? '', result, 'location', common.source);
      return result;
    },
    'msgnet.sendMedia': async (scope, { media, mentions, mentionAll, ...common }) => {
      const { to } = common;
      const outgoing = outgoingMedia(media);
      const mentioned = await mentionedOf(scope, to, mentions, mentionAll);
      const options = optionsOf(scope, common, mentioned.size > 0 ? { mentions: [...mentioned] } : {});
      const result = await networkOperation(SEND_FAILED, () =>
        scope.session().messages.sendMedia(to, outgoing, options),
      );
      await sent(scope, to, media.caption ?? '', result, outgoing.kind, common.source, outgoing);
      return result;
    },
    'msgnet.send': async (scope, { content: wire, ...common }) => {
      const { to } = common;
      const content = fromWire(wire);
      const result = await networkOperation(SEND_FAILED, () =>
        scope.session().messages.sendContent(to, content, optionsOf(scope, common)),
      );
      if (content.kind === 'poll') {
        await recordSentPoll(scope.ctx, result.messageId, content.question, content.options);
      }
      const { type, text } = historyOf(content);
      const media = content.kind === 'forward' ? content.media : undefined;
      await sent(scope, to, text, result, type, common.source, media);
      if (content.kind === 'edit') {
        await applyEdit(scope.ctx.store, scope.ctx.instanceId, content.target.id, content.text, scope.ctx.log);
      }
      return result;
    },
    'msgnet.deleteMessage': async (scope, { chatJid, messageId, fromMe }) => {
      const { ctx } = scope;
      await networkOperation('Failed to delete the message', () =>
        scope.session().messages.deleteMessage(chatJid, messageId, fromMe),
      );
      await ctx.store.messages
        .delete(ctx.instanceId, messageId)
        .catch((err: unknown) => ctx.log.warn({ err, messageId }, 'could not drop a deleted message from the history'));
      return { deleted: true };
    },
    'msgnet.presence': async (scope, { to, state }) => {
      await networkOperation('Failed to send the chat presence', () =>
        scope.session().messages.sendChatPresence(to, state),
      );
      return { sent: true };
    },
    'media.download': async (scope, { messageId }) => {
      if (!deps.media) throw new UnavailableError('Received media is not available on this node');
      const { ctx } = scope;
      const file = await deps.media.downloadRecorded(
        scope.session(),
        await ctx.store.messages.find(ctx.instanceId, messageId),
      );
      return {
        base64: file.data.toString('base64'),
        mimetype: file.mimetype,
        ...(file.fileName ? { fileName: file.fileName } : {}),
      };
    },
  };
}

/** The JIDs a send mentions: those given, and with `mentionAll` every member of the group `to`. */
async function mentionedOf(
  scope: ActorScope,
  to: string,
  mentions: string[] | undefined,
  mentionAll: boolean | undefined,
): Promise<Set<string>> {
  const mentioned = new Set(mentions ?? []);
  if (mentionAll) {
    const group = (await scope.session().groups.list(true)).find((g) => g.jid === to);
    if (!group) throw new NotFoundError('Group not found');
    for (const member of group.members ?? []) mentioned.add(member.jid);
  }
  return mentioned;
}
