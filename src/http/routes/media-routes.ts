import { z } from 'zod';
import { AppError, ErrorCode, NotFoundError, ValidationError } from '../../errors.js';
import type { MediaBlobStore } from '../../media/media-blobs.js';
import { storageTarget } from '../../media/object-storage.js';
import type { ObjectStorageClients } from '../../media/object-storage.js';
import type { SecretBox } from '../../security/secret-box.js';
import type { InstanceRecord, MessageRecord, StoredObject } from '../../store/records.js';
import { ApiRouter, queryParam } from '../api-router.js';
import { requireInstance } from '../auth.js';
import type { ActorRouteDeps } from '../route-deps.js';
import { nameRequired } from '../route-helpers.js';

interface Deps extends ActorRouteDeps {
  secrets: SecretBox;
  blobs: MediaBlobStore;
  storage: ObjectStorageClients;
}

/** The instance's current storage block can still reach the object (same bucket and endpoint, a secret). */
function reachable(instance: InstanceRecord, stored: StoredObject | undefined) {
  const s = instance.config.storage;
  if (!stored || !s?.secretKeySealed) return undefined;
  return s.bucket === stored.bucket && (s.endpoint ?? '') === (stored.endpoint ?? '') ? s : undefined;
}

const mediaQuery = z.object({
  messageId: queryParam.text('The message whose file to return'),
  redirect: queryParam.flag('redirect', 'Answer a stored object with a 302 to its URL (default true)'),
});

const notFound = (err: unknown) => err instanceof AppError && err.code === ErrorCode.NotFound;

/**
 * GET /api/chat/media/:instance?messageId=: a message's received file, for catch-up after a WebSocket
 * gap. From the instance's bucket when it was stored there (302 to a fresh object URL), else from the
 * copy kept for base64 consumers (MEDIA_BLOB_TTL), else downloaded again from the session while the
 * owner still holds the message; 404 once none of them has it.
 */
export function mediaRoutes(deps: Deps) {
  const api = new ApiRouter({ prefix: '/api/chat', tag: 'Chats' });
  nameRequired(api, 'get', '/media', deps.auth);

  api.route(
    {
      method: 'get',
      path: '/media/:instance',
      summary: "A received message's file: a redirect to its object URL, or its bytes as base64",
      auth: requireInstance(deps.store, deps.auth),
      query: mediaQuery,
      responses: {
        200: '`{media: {messageId, type, mimetype, fileName, size, source: storage|cache|session, url | base64}}`',
        302: 'The object URL (stored files, unless `redirect=false`)',
        400: '`messageId is required`',
        404: '`Message not found`, `Message has no media`, `Media is no longer available`',
      },
    },
    async (ctx, { query }) => {
      const instance = ctx.state.instance!;
      const messageId = query.messageId;
      if (!messageId) throw new ValidationError('messageId is required');
      const redirect = query.redirect ?? true;
      const record: MessageRecord | undefined = await deps.store.messages.find(instance.id, messageId);
      if (!record) throw new NotFoundError('Message not found');
      const media = record.media;
      if (!media) throw new NotFoundError('Message has no media');
      const view = {
        messageId,
        type: media.kind,
        mimetype: media.mimetype,
        fileName: media.fileName ?? null,
        size: media.size ?? null,
      };

      const storage = reachable(instance, media.stored);
      if (storage && media.stored) {
        const url = await deps.storage.for(storageTarget(storage, deps.secrets)).url(media.stored.key);
        if (redirect) {
          ctx.status = 302;
          ctx.set('Location', url);
        }
        ctx.body = { success: true, message: 'Media is in object storage', media: { ...view, source: 'storage', url } };
        return;
      }

      let base64: string | undefined;
      let source: 'cache' | 'session' = 'cache';
      const kept = await deps.blobs.get(instance.id, messageId);
      if (kept) {
        base64 = kept.toString('base64');
      } else if (!record.fromMe) {
        const fromSession = await deps.actors
          .for(ctx)
          .callIfOwned(instance.id, 'media.download', { messageId })
          .catch((err: unknown) => {
            if (notFound(err)) return undefined;
            throw err;
          });
        base64 = fromSession?.base64;
        source = 'session';
      }
      if (base64 === undefined) throw new NotFoundError('Media is no longer available');
      ctx.body = { success: true, message: 'Media retrieved successfully', media: { ...view, source, base64 } };
    },
  );

  /**
   * GET /api/chat/base64/:instance?messageId= (the hosted product's route): the file's bytes as base64,
   * wherever they are kept (the instance's bucket, the copy kept for base64 consumers, or the session).
   */
  nameRequired(api, 'get', '/base64', deps.auth);
  api.route(
    {
      method: 'get',
      path: '/base64/:instance',
      summary: "A received message's file as base64 (the hosted product's route)",
      auth: requireInstance(deps.store, deps.auth),
      query: z.object({ messageId: queryParam.text('The message whose file to return (required)') }),
      responses: {
        200: '`{message_id, mime_type, media_type (image, video, audio, document, sticker), base64}`',
        400: '`messageId query parameter is required`',
        404: '`Message not found or no media available`',
      },
    },
    async (ctx, { query }) => {
      const instance = ctx.state.instance!;
      const messageId = query.messageId;
      if (!messageId) throw new ValidationError('messageId query parameter is required');
      const gone = () => new NotFoundError('Message not found or no media available');
      const record = await deps.store.messages.find(instance.id, messageId);
      const media = record?.media;
      if (!record || !media) throw gone();
      let bytes: Buffer | undefined;
      const storage = reachable(instance, media.stored);
      if (storage && media.stored) {
        bytes = await deps.storage
          .for(storageTarget(storage, deps.secrets))
          .get(media.stored.key, deps.media.maxBytes)
          .catch((err: unknown) => {
            ctx.state.log.warn({ err, messageId }, 'stored media unreadable; trying the other copies');
            return undefined;
          });
      }
      bytes ??= await deps.blobs.get(instance.id, messageId);
      if (bytes === undefined && !record.fromMe) {
        const fromSession = await deps.actors
          .for(ctx)
          .callIfOwned(instance.id, 'media.download', { messageId })
          .catch((err: unknown) => {
            if (notFound(err)) return undefined;
            throw err;
          });
        if (fromSession) bytes = Buffer.from(fromSession.base64, 'base64');
      }
      if (bytes === undefined) throw gone();
      ctx.body = {
        success: true,
        message: 'Media retrieved successfully',
        message_id: messageId,
        mime_type: media.mimetype,
        media_type: media.kind,
        base64: bytes.toString('base64'),
      };
    },
  );

  return api;
}
