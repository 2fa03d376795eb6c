import { normalizeMessageContent, proto } from '@whiskeysockets/baileys';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { MediaKind } from '../msgnet-driver.js';
import type { MessageDetails, NormalizedMessage, Party } from '../msgnet-events.js';
import { int64 } from './int64.js';
import { readPollVote } from './poll-vote.js';
import type { VoteContext } from './poll-vote.js';
import { parseVcard } from './vcard.js';

/** What a message says, by kind: its type, text, and the details of its kind. */
export type Body = Pick<NormalizedMessage, 'type' | 'text' | 'media' | 'selectedButtonId' | 'location'> &
  Omit<MessageDetails, 'forwarded'>;

/** What mapping a body needs beyond the message: the poll book (polls are remembered, votes read). */
export interface BodyContext extends VoteContext {
  /** The message's author, the creator of a poll it carries. */
  sender: Party;
}

const MEDIA_FIELDS: Record<string, MediaKind> = {
  imageMessage: 'image',
  videoMessage: 'video',
  ptvMessage: 'video',
  audioMessage: 'audio',
  documentMessage: 'document',
  stickerMessage: 'sticker',
};

const POLL_FIELDS = [
  'pollCreationMessage',
  'pollCreationMessageV2',
  'pollCreationMessageV3',
  'pollCreationMessageV5',
] as const;

const { Type: ProtocolType } = proto.Message.ProtocolMessage;

/** Content types that carry nothing a user wrote (key shares, bare context). */
const SILENT_CONTENT = new Set(['senderKeyDistributionMessage', 'messageContextInfo']);

/**
 * Whether the content has nothing to report: key shares, and protocol messages (history notices, key
 * shares, ephemeral settings…) other than edits and revokes.
 */
export function isSilent(content: proto.IMessage, contentType: keyof proto.IMessage): boolean {
  if (SILENT_CONTENT.has(contentType)) return true;
  if (contentType !== 'protocolMessage') return false;
  const protocol = content.protocolMessage;
  return !protocol?.key?.id || (protocol.type !== ProtocolType.MESSAGE_EDIT && protocol.type !== ProtocolType.REVOKE);
}

export function bodyOf(
  msg: WAMessage,
  content: proto.IMessage,
  contentType: keyof proto.IMessage,
  ctx: BodyContext,
): Body {
  const kind = MEDIA_FIELDS[contentType];
  if (kind) return mediaBody(content[contentType] as MediaContent, kind, contentType === 'ptvMessage');
  if (content.conversation !== undefined && content.conversation !== null) {
    return { type: 'text', text: content.conversation };
  }
  if (content.extendedTextMessage) return { type: 'text', text: content.extendedTextMessage.text ?? '' };
  if (content.locationMessage) {
    const l = content.locationMessage;
    return {
      type: 'location',
      text: l.name ?? '',
      location: {
        latitude: l.degreesLatitude ?? 0,
        longitude: l.degreesLongitude ?? 0,
        ...(l.name ? { name: l.name } : {}),
        ...(l.address ? { address: l.address } : {}),
      },
    };
  }
  if (content.contactMessage) return contactsBody([content.contactMessage]);
  if (content.contactsArrayMessage) return contactsBody(content.contactsArrayMessage.contacts ?? []);
  if (content.reactionMessage) {
    const emoji = content.reactionMessage.text ?? '';
    return { type: 'reaction', text: emoji, reaction: { messageId: content.reactionMessage.key?.id ?? '', emoji } };
  }
  const pollField = POLL_FIELDS.find((field) => content[field]);
  if (pollField) return pollBody(msg, content, content[pollField]!, ctx);
  if (content.pollUpdateMessage) {
    const pollVote = readPollVote(content.pollUpdateMessage, msg.key, ctx);
    return { type: 'poll_vote', text: pollVote.options.join(', '), pollVote };
  }
  if (content.eventMessage) return eventBody(content.eventMessage);
  if (content.protocolMessage) return protocolBody(content.protocolMessage);
  if (content.buttonsResponseMessage) {
    const reply = content.buttonsResponseMessage;
    return buttonReply(reply.selectedButtonId, reply.selectedDisplayText);
  }
  if (content.templateButtonReplyMessage) {
    const reply = content.templateButtonReplyMessage;
    return buttonReply(reply.selectedId, reply.selectedDisplayText);
  }
  if (content.listResponseMessage) {
    const reply = content.listResponseMessage;
    return listReply(reply.singleSelectReply?.selectedRowId, reply.title);
  }
  if (content.interactiveResponseMessage) {
    const reply = content.interactiveResponseMessage;
    const id = nativeFlowId(reply.nativeFlowResponseMessage?.paramsJson);
    // A list sent as a native-flow `single_select` answers with the chosen row; other flows are buttons.
    if (reply.nativeFlowResponseMessage?.name === 'single_select') return listReply(id, reply.body?.text);
    return buttonReply(id, reply.body?.text);
  }
  if (content.interactiveMessage) return { type: 'interactive', text: content.interactiveMessage.body?.text ?? '' };
  if (content.requestPaymentMessage || content.sendPaymentMessage) return { type: 'payment', text: '' };
  return { type: 'other', text: '' };
}

/** The fields every media content shares, and an audio's voice-note flag. */
type MediaContent = proto.Message.IDocumentMessage & Pick<proto.Message.IAudioMessage, 'ptt'>;

/** `ptv`: the content came as a `ptvMessage` (a round video note); an audio's `ptt` flag marks a voice note. */
function mediaBody(media: MediaContent, kind: MediaKind, ptv: boolean): Body {
  const size = int64(media.fileLength);
  return {
    type: 'media',
    text: media.caption ?? '',
    media: {
      kind,
      mimetype: media.mimetype ?? '',
      ...(media.fileName ? { fileName: media.fileName } : {}),
      ...(media.caption ? { caption: media.caption } : {}),
      ...(size !== undefined ? { size } : {}),
      ...(kind === 'audio' && media.ptt ? { ptt: true } : {}),
      ...(ptv ? { ptv: true } : {}),
    },
  };
}

function contactsBody(messages: proto.Message.IContactMessage[]): Body {
  const contacts = messages.map((m) => parseVcard(m.vcard ?? '', m.displayName));
  return { type: 'contact', text: contacts.map((c) => c.fullName).join(', '), contacts };
}

/** A poll; remembered with its secret (when it has one), so that the votes on it can be read. */
function pollBody(
  msg: WAMessage,
  content: proto.IMessage,
  poll: proto.Message.IPollCreationMessage,
  ctx: BodyContext,
): Body {
  const question = poll.name ?? '';
  const options = (poll.options ?? []).map((o) => o.optionName ?? '');
  const secret = content.messageContextInfo?.messageSecret ?? msg.message?.messageContextInfo?.messageSecret;
  if (secret?.length && msg.key.id) {
    const fromMe = !!msg.key.fromMe;
    const creators = fromMe ? [] : [ctx.sender.jid, ...(ctx.sender.lid ? [ctx.sender.lid] : [])];
    ctx.polls.remember(msg.key.id, { question, options, secret: Buffer.from(secret), fromMe, creators });
  }
  return {
    type: 'poll',
    text: question,
    poll: { question, options, maxAnswer: poll.selectableOptionsCount || options.length },
  };
}

function eventBody(e: proto.Message.IEventMessage): Body {
  const name = e.name ?? '';
  const endAt = int64(e.endTime);
  const location = e.location?.name || e.location?.address;
  return {
    type: 'event',
    text: name,
    event: {
      name,
      ...(e.description ? { description: e.description } : {}),
      startAt: (int64(e.startTime) ?? 0) * 1000,
      ...(endAt ? { endAt: endAt * 1000 } : {}),
      ...(location ? { location } : {}),
      ...(e.joinLink ? { joinLink: e.joinLink } : {}),
    },
  };
}

/** An edit (the new text, or a media's new caption) or a revoke; `isSilent` has let no other type through. */
function protocolBody(protocol: proto.Message.IProtocolMessage): Body {
  const messageId = protocol.key?.id ?? '';
  if (protocol.type === ProtocolType.REVOKE) return { type: 'revoked', text: '', revoked: { messageId } };
  const text = editedText(normalizeMessageContent(protocol.editedMessage));
  return { type: 'edit', text, edit: { messageId, text } };
}

function editedText(content: proto.IMessage | undefined): string {
  if (!content) return '';
  if (typeof content.conversation === 'string') return content.conversation;
  return (
    content.extendedTextMessage?.text ??
    content.imageMessage?.caption ??
    content.videoMessage?.caption ??
    content.documentMessage?.caption ??
    ''
  );
}

function buttonReply(id: string | null | undefined, text: string | null | undefined): Body {
  return { type: 'buttons_response', text: text ?? '', ...(id ? { selectedButtonId: id } : {}) };
}

function listReply(id: string | null | undefined, text: string | null | undefined): Body {
  return { type: 'list_response', text: text ?? '', ...(id ? { selectedRowId: id } : {}) };
}

/** A native-flow reply carries the chosen button's or row's params as JSON (`{"id": …}`). */
function nativeFlowId(paramsJson: string | null | undefined): string | undefined {
  if (!paramsJson) return undefined;
  try {
    const params = JSON.parse(paramsJson) as { id?: unknown };
    return typeof params.id === 'string' ? params.id : undefined;
  } catch {
    return undefined;
  }
}
