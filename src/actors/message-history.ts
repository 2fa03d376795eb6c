import type { Logger } from 'pino';
import type { OutgoingMedia } from '../msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../msgnet/msgnet-events.js';
import type { MessageRecord, StoredObject } from '../store/records.js';
import type { Store } from '../store/store.js';

/**
 * A network message as the chat history keeps it: its description and text, never media bytes (`stored`:
 * where the received-media pipeline uploaded the file).
 */
export function historyRecord(instanceId: string, m: NormalizedMessage, stored?: StoredObject): MessageRecord {
  return {
    instanceId,
    id: m.id,
    chatJid: m.chat.jid,
    fromMe: m.fromMe,
    senderJid: m.sender.jid,
    timestamp: m.timestamp,
    type: m.media ? m.media.kind : m.type,
    text: m.text,
    media: m.media
      ? {
          kind: m.media.kind,
          mimetype: m.media.mimetype,
          ...(m.media.fileName ? { fileName: m.media.fileName } : {}),
          ...(m.media.size !== undefined ? { size: m.media.size } : {}),
          ...(stored ? { stored } : {}),
        }
      : undefined,
    status: m.fromMe ? 'pending' : 'received',
  };
}

/** Saves to the history; a failure is logged, never allowed to stop the event flow or a send that succeeded. */
export async function remember(store: Store, record: MessageRecord, log: Logger): Promise<void> {
  try {
    await store.messages.save(record);
  } catch (err) {
    log.warn({ err, messageId: record.id }, 'could not store the message in the history');
  }
}

/** A message this instance sent, as its send handler knows it. */
export interface SentRecord {
  instanceId: string;
  chatJid: string;
  messageId: string;
  /** Unix milliseconds. */
  timestamp: number;
  /** The linked number. */
  senderJid: string;
  type: string;
  text: string;
  media?: OutgoingMedia;
  /** The client's label of the send. */
  source?: string;
}

/** Keeps a send in the history at once, so it shows before (or without) its echo from the network. */
export async function rememberSent(store: Store, sent: SentRecord, log: Logger): Promise<void> {
  const { media } = sent;
  await remember(
    store,
    {
      instanceId: sent.instanceId,
      id: sent.messageId,
      chatJid: sent.chatJid,
      fromMe: true,
      senderJid: sent.senderJid,
      timestamp: sent.timestamp,
      type: sent.type,
      text: sent.text,
      media: media
        ? {
            kind: media.kind,
            mimetype: media.mimetype,
            size: media.data.length,
            ...(media.fileName ? { fileName: media.fileName } : {}),
          }
        : undefined,
      ...(sent.source !== undefined ? { source: sent.source } : {}),
    },
    log,
  );
}

/** An edit replaces the text of the message it edits, when the history has it; a failure is only logged. */
export async function applyEdit(
  store: Store,
  instanceId: string,
  id: string,
  text: string,
  log: Logger,
): Promise<void> {
  try {
    const original = await store.messages.find(instanceId, id);
    if (original) await store.messages.save({ ...original, text });
  } catch (err) {
    log.warn({ err, messageId: id }, 'could not apply an edit to the history');
  }
}
