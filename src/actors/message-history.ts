import type { Logger } from 'pino';
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
