import type { Logger } from 'pino';
import { NotFoundError, TimeoutError, reasonOf } from '../errors.js';
import { wantsEvent } from './event-filter.js';
import type { EventAttachments, InstanceEvent } from './instance-events.js';
import { matches } from './webhooks/webhook-dispatcher.js';
import type { MediaKind, MsgNetSession, ReceivedMedia } from '../msgnet/msgnet-driver.js';
import type { NormalizedMessage } from '../msgnet/msgnet-events.js';
import type { SecretBox } from '../security/secret-box.js';
import type { InstanceRecord, MessageRecord, StorageStatus, StoredObject, WebhookRecord } from '../store/records.js';
import type { Store } from '../store/store.js';
import type { MediaBlobStore } from '../media/media-blobs.js';
import type { MediaCounters } from '../media/media-counters.js';
import { objectKey, storageTarget } from '../media/object-storage.js';
import type { ObjectStorageClients } from '../media/object-storage.js';

export interface ReceivedMediaDeps {
  store: Store;
  secrets: SecretBox;
  blobs: MediaBlobStore;
  storage: ObjectStorageClients;
  counters: MediaCounters;
  /** The instance's webhooks (the dispatcher's short-lived copy), to see which want base64. */
  webhooks: (instanceId: string) => Promise<WebhookRecord[]>;
  /** MEDIA_MAX_BYTES: larger files are not downloaded. */
  maxBytes: number;
  /** MEDIA_FETCH_TIMEOUT_MS: deadline of one download. */
  downloadTimeoutMs: number;
  /** MEDIA_BLOB_TTL: how long the one copy for base64 consumers is kept. */
  blobTtlMs: number;
}

/** What the pipeline adds to a received message's event and history record. */
export interface ReceivedMediaResult {
  /** The object's URL (presigned or public) when it was stored; also put in `s3Url`. */
  url: string | null;
  /** Why something expected is missing (`download failed: …`, `storage failed: …`, `base64 unavailable: …`). */
  error: string | null;
  /** Where the file was stored, for GET /api/chat/media. */
  stored: StoredObject | undefined;
  /** The bytes for the WebSocket and the kept copy's reference for base64 webhooks. */
  attachments: EventAttachments;
}

/** Rejects with TimeoutError after `ms`, for drivers that do not honour the abort signal. */
function withDeadline<T>(work: Promise<T>, ms: number, signal: AbortSignal): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    const fail = () => reject(new TimeoutError(`Media download took longer than ${ms} ms`));
    if (signal.aborted) fail();
    signal.addEventListener('abort', fail, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', fail));
  });
}

/** A history record as the message the session reported, enough for `downloadMedia` (id and media). */
function asMessage(record: MessageRecord): NormalizedMessage {
  const chatType =
    record.chatJid === 'status@broadcast' ? 'status' : record.chatJid.endsWith('@g.us') ? 'group' : 'private';
  return {
    id: record.id,
    fromMe: record.fromMe,
    timestamp: record.timestamp,
    chat: { jid: record.chatJid, type: chatType },
    sender: { jid: record.senderJid },
    type: 'media',
    text: record.text,
    ...(record.media
      ? {
          media: {
            kind: record.media.kind as MediaKind,
            mimetype: record.media.mimetype,
            ...(record.media.fileName ? { fileName: record.media.fileName } : {}),
          },
        }
      : {}),
  };
}

/** The event with the pipeline's URL and error in `data.message.media` (base64 travels separately). */
export function withReceivedMedia(event: InstanceEvent, result: ReceivedMediaResult): InstanceEvent {
  if (event.event !== 'message.exchange' || !event.data.message.media) return event;
  const media = { ...event.data.message.media, url: result.url, s3Url: result.url, error: result.error };
  return { event: event.event, data: { ...event.data, message: { ...event.data.message, media } } };
}

/**
 * The received-media pipeline, run by the instance's owner for each incoming image, video, audio,
 * document or sticker, before its `message.exchange` event leaves. It downloads the file once (bounded by
 * MEDIA_MAX_BYTES and MEDIA_FETCH_TIMEOUT_MS, through the instance's proxy) when someone needs it:
 *
 * - the storage block is enabled: the file is uploaded under the documented key and its URL goes in
 *   `media.url` and `media.s3Url`;
 * - a webhook or the WebSocket has `base64` on: one copy is kept (MediaBlobStore, MEDIA_BLOB_TTL) which
 *   base64 webhooks reference and resolve when they are sent, and the WebSocket gets the bytes with the
 *   event;
 * - neither: nothing is downloaded and the event carries the metadata only.
 *
 * It never throws: a failed download or upload is logged, counted, and noted in `media.error`, and the
 * event is emitted all the same.
 */
export class ReceivedMediaPipeline {
  constructor(private readonly deps: ReceivedMediaDeps) {}

  get counters(): MediaCounters {
    return this.deps.counters;
  }

  async receive(
    instance: InstanceRecord,
    m: NormalizedMessage,
    session: MsgNetSession,
    log: Logger,
  ): Promise<ReceivedMediaResult | undefined> {
    if (m.fromMe || !m.media) return undefined;
    // Read afresh: configuration saved on any node applies to the next file without a restart.
    const fresh = (await this.deps.store.instances.findById(instance.id).catch(() => undefined)) ?? instance;
    const storage = fresh.config.storage?.enabled ? fresh.config.storage : undefined;
    const ws = fresh.config.websocket;
    const websocketBase64 = !!ws?.enabled && ws.base64 && wantsEvent(ws.events, 'message.exchange');
    const webhooks = await this.deps.webhooks(instance.id).catch((err: unknown) => {
      log.warn({ err }, 'could not read the webhooks for received media');
      return [];
    });
    const webhookBase64 = webhooks.some((w) => w.base64 && matches(w, 'message.exchange'));
    if (!storage && !websocketBase64 && !webhookBase64) return undefined;

    let file: ReceivedMedia;
    try {
      file = await this.download(session, m);
    } catch (err) {
      this.deps.counters.add('downloadFailed');
      log.warn({ err, messageId: m.id }, 'could not download received media');
      return { url: null, error: `download failed: ${reasonOf(err)}`, stored: undefined, attachments: {} };
    }

    const errors: string[] = [];
    let url: string | null = null;
    let stored: StoredObject | undefined;
    if (storage) {
      const key = objectKey(storage.pathPrefix, instance.id, m.id, m.media, m.timestamp);
      try {
        const target = storageTarget(storage, this.deps.secrets);
        const bucket = this.deps.storage.for(target);
        await bucket.put(key, file.data, m.media.mimetype, m.media.fileName);
        url = await bucket.url(key);
        stored = { bucket: target.bucket, key, ...(target.endpoint ? { endpoint: target.endpoint } : {}) };
        this.deps.counters.add('uploaded');
        await this.#recordStatus(fresh, undefined, log);
      } catch (err) {
        this.deps.counters.add('uploadFailed');
        log.warn(
          { err, messageId: m.id, bucket: storage.bucket, reason: reasonOf(err) },
          'could not store received media',
        );
        errors.push(`storage failed: ${reasonOf(err)}`);
        await this.#recordStatus(fresh, reasonOf(err), log);
      }
    }

    const attachments: EventAttachments = {};
    if (websocketBase64 || webhookBase64) {
      try {
        await this.deps.blobs.put(instance.id, m.id, file.data, this.deps.blobTtlMs);
        this.deps.counters.add('blobKept');
        if (webhookBase64) attachments.webhookMediaBlob = m.id;
      } catch (err) {
        this.deps.counters.add('blobFailed');
        log.warn({ err, messageId: m.id }, 'could not keep received media for base64 delivery');
        if (webhookBase64) errors.push(`base64 unavailable: could not keep the media (${reasonOf(err)})`);
      }
      if (websocketBase64) attachments.websocketMediaBase64 = file.data.toString('base64');
    }
    return { url, error: errors.length > 0 ? errors.join('; ') : null, stored, attachments };
  }

  /** The file of a message the session still holds, bounded in size and time. */
  async download(session: MsgNetSession, m: NormalizedMessage): Promise<ReceivedMedia> {
    const signal = AbortSignal.timeout(this.deps.downloadTimeoutMs);
    const file = await withDeadline(
      session.messages.downloadMedia(m, this.deps.maxBytes, signal),
      this.deps.downloadTimeoutMs,
      signal,
    );
    this.deps.counters.add('downloaded');
    this.deps.counters.add('downloadedBytes', file.data.length);
    return file;
  }

  /** A message of the history, downloaded again from the session (GET /api/chat/media, storage off). */
  async downloadRecorded(session: MsgNetSession, record: MessageRecord | undefined): Promise<ReceivedMedia> {
    if (!record?.media || record.fromMe) throw new NotFoundError('Media not available');
    return this.download(session, asMessage(record));
  }

  /** Writes the storage status only when it changes (not once per file), for its configuration revision. */
  async #recordStatus(instance: InstanceRecord, error: string | undefined, log: Logger): Promise<void> {
    const revision = instance.config.storage?.revision ?? '';
    const current = instance.config.storageStatus;
    const state = error === undefined ? 'ok' : 'error';
    if (current && current.revision === revision && current.state === state && current.error === error) return;
    const status: StorageStatus = { revision, state, error, checkedAt: new Date().toISOString() };
    await this.deps.store.instances.updateConfigBlock(instance.id, 'storageStatus', status).catch((err: unknown) => {
      log.warn({ err }, 'could not record the storage status');
    });
  }
}
