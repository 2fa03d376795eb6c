import { normalizeMessageContent, proto } from '@whiskeysockets/baileys';

/** What a phone kept of one message it decrypted (what `GET /phones/:number/received` lists). */
export interface ReceivedRecord {
  /** Order of arrival at this phone. */
  seq: number;
  id: string;
  /** The author's user jid (PN). */
  from: string;
  /** The chat: the other party, or the group. */
  chat: string;
  /** A copy of a message our own account sent from another device (a linked companion). */
  fromMe: boolean;
  type: string;
  text?: string;
  caption?: string;
  media?: { mimetype?: string; fileName?: string; size?: number; sha256?: string; ptt?: boolean; error?: string };
  location?: { latitude: number; longitude: number; name?: string; address?: string };
  contact?: { displayName?: string; vcard?: string }[];
  reaction?: { messageId: string; emoji: string };
  poll?: { name: string; options: string[]; selectableCount: number };
  pollVote?: { pollId: string; options: string[] };
  buttonReply?: { id: string; text: string };
  listReply?: { id: string; title: string };
  replyTo?: string;
  mentions?: string[];
  /** A protocol message: `revoke` or `edit` with the target id. */
  protocol?: { kind: string; target?: string; text?: string };
  /** The connection (`c12`) the sending device used, and the node it said it was. */
  connection?: string;
  node?: string;
  offline: boolean;
  /** This is a later copy of an id already recorded (the network relayed it again). */
  duplicate: boolean;
  t: number;
}

/** A message the phone could not decrypt. */
export interface DecryptFailure {
  id: string;
  from: string;
  chat: string;
  error: string;
  connection?: string;
  node?: string;
  t: number;
}

type Fields = Omit<
  ReceivedRecord,
  'seq' | 'id' | 'from' | 'chat' | 'fromMe' | 'connection' | 'node' | 'offline' | 'duplicate' | 't'
>;

/** Names a decrypted message's kind and lifts out what tests look at; the media bytes come later. */
export function describeMessage(message: proto.IMessage | null | undefined): Fields {
  const m = normalizeMessageContent(message ?? undefined);
  if (!m) return { type: 'empty' };
  const context = (c: { contextInfo?: proto.IContextInfo | null } | null | undefined): Partial<Fields> => ({
    ...(c?.contextInfo?.stanzaId ? { replyTo: c.contextInfo.stanzaId } : {}),
    ...(c?.contextInfo?.mentionedJid?.length ? { mentions: c.contextInfo.mentionedJid } : {}),
  });
  if (m.conversation) return { type: 'text', text: m.conversation };
  if (m.extendedTextMessage) {
    return { type: 'text', text: m.extendedTextMessage.text ?? '', ...context(m.extendedTextMessage) };
  }
  const media = (
    [
      ['image', m.imageMessage],
      ['video', m.videoMessage ?? m.ptvMessage],
      ['audio', m.audioMessage],
      ['document', m.documentMessage],
      ['sticker', m.stickerMessage],
    ] as const
  ).find(([, v]) => v);
  if (media) {
    const [type, v] = media;
    const caption = 'caption' in v! ? (v.caption ?? undefined) : undefined;
    return {
      type,
      ...(caption ? { caption } : {}),
      media: {
        ...(v!.mimetype ? { mimetype: v!.mimetype } : {}),
        ...('fileName' in v! && v.fileName ? { fileName: v.fileName } : {}),
        ...('ptt' in v! && v.ptt ? { ptt: true } : {}),
        ...(v!.fileLength ? { size: Number(v!.fileLength) } : {}),
      },
      ...context(v),
    };
  }
  if (m.locationMessage) {
    return {
      type: 'location',
      location: {
        latitude: m.locationMessage.degreesLatitude ?? 0,
        longitude: m.locationMessage.degreesLongitude ?? 0,
        ...(m.locationMessage.name ? { name: m.locationMessage.name } : {}),
        ...(m.locationMessage.address ? { address: m.locationMessage.address } : {}),
      },
    };
  }
  if (m.contactMessage) {
    return {
      type: 'contact',
      contact: [{ displayName: m.contactMessage.displayName ?? undefined, vcard: m.contactMessage.vcard ?? undefined }],
    };
  }
  if (m.contactsArrayMessage) {
    return {
      type: 'contacts',
      contact: (m.contactsArrayMessage.contacts ?? []).map((c) => ({
        displayName: c.displayName ?? undefined,
        vcard: c.vcard ?? undefined,
      })),
    };
  }
  if (m.reactionMessage) {
    return {
      type: 'reaction',
      reaction: { messageId: m.reactionMessage.key?.id ?? '', emoji: m.reactionMessage.text ?? '' },
    };
  }
  const poll = m.pollCreationMessage ?? m.pollCreationMessageV2 ?? m.pollCreationMessageV3;
  if (poll) {
    return {
      type: 'poll',
      poll: {
        name: poll.name ?? '',
        options: (poll.options ?? []).map((o) => o.optionName ?? ''),
        selectableCount: poll.selectableOptionsCount ?? 0,
      },
    };
  }
  if (m.pollUpdateMessage) {
    return {
      type: 'pollVote',
      pollVote: { pollId: m.pollUpdateMessage.pollCreationMessageKey?.id ?? '', options: [] },
    };
  }
  if (m.buttonsResponseMessage) {
    return {
      type: 'buttonReply',
      buttonReply: {
        id: m.buttonsResponseMessage.selectedButtonId ?? '',
        text: m.buttonsResponseMessage.selectedDisplayText ?? '',
      },
    };
  }
  if (m.templateButtonReplyMessage) {
    return {
      type: 'buttonReply',
      buttonReply: {
        id: m.templateButtonReplyMessage.selectedId ?? '',
        text: m.templateButtonReplyMessage.selectedDisplayText ?? '',
      },
    };
  }
  if (m.listResponseMessage) {
    return {
      type: 'listReply',
      listReply: {
        id: m.listResponseMessage.singleSelectReply?.selectedRowId ?? '',
        title: m.listResponseMessage.title ?? '',
      },
    };
  }
  if (m.interactiveMessage) return { type: 'interactive', text: m.interactiveMessage.body?.text ?? '' };
  if (m.buttonsMessage) return { type: 'buttons', text: m.buttonsMessage.contentText ?? '' };
  if (m.listMessage) return { type: 'list', text: m.listMessage.description ?? '' };
  if (m.eventMessage) return { type: 'event', text: m.eventMessage.name ?? '' };
  if (m.protocolMessage) {
    const p = m.protocolMessage;
    const Type = proto.Message.ProtocolMessage.Type;
    const kind =
      p.type === Type.REVOKE ? 'revoke' : p.type === Type.MESSAGE_EDIT ? 'edit' : `protocol-${p.type ?? '?'}`;
    const edited = p.editedMessage ? describeMessage(p.editedMessage).text : undefined;
    return {
      type: 'protocol',
      protocol: { kind, ...(p.key?.id ? { target: p.key.id } : {}), ...(edited ? { text: edited } : {}) },
    };
  }
  const key = Object.keys(m).find((k) => k !== 'messageContextInfo' && (m as Record<string, unknown>)[k]);
  return { type: key ?? 'unknown' };
}
