import { AppError, ErrorCode, MediaUploadError } from '../errors.js';
import type { StatusPost } from '../msgnet/msgnet-driver.js';
import type { ActorScope } from './actor-scope.js';
import type { CallHandlers } from './instance-actor.js';
import { rememberSent } from './message-history.js';
import { networkOperation } from './network-operation.js';
import type { Refusal } from './network-operation.js';
import type { StatusCallMap } from './status-calls.js';
import { outgoingMedia } from './wire-media.js';

/**
 * The status table of spec 7 for the network's refusal: an upload failure is `media_upload_failed`
 * (drivers that do not type theirs: Baileys' "Media upload failed on all hosts"), anything else
 * `send_failed` with `Failed to send status: <reason>`.
 */
const statusRefused =
  (withMedia: boolean): Refusal =>
  (reason, cause) =>
    withMedia && /upload/i.test(reason)
      ? new MediaUploadError({ cause })
      : new AppError(ErrorCode.SendFailed, `Failed to send status: ${reason}`, { cause });

/** The status post on the owner node, kept in the history like every send. */
export function statusHandlers(): Pick<CallHandlers<ActorScope>, keyof StatusCallMap> {
  return {
    'status.publish': async (scope, payload) => {
      const { ctx } = scope;
      const session = scope.session();
      const media = payload.media ? outgoingMedia(payload.media) : undefined;
      const post: StatusPost = {
        type: payload.type,
        text: payload.text,
        ...(media ? { media } : {}),
        ...(payload.backgroundColor ? { backgroundColor: payload.backgroundColor } : {}),
        ...(payload.font !== undefined ? { font: payload.font } : {}),
      };
      const result = await networkOperation(statusRefused(media !== undefined), () => session.status.publish(post));
      await rememberSent(
        ctx.store,
        {
          instanceId: ctx.instanceId,
          chatJid: 'status@broadcast',
          messageId: result.messageId,
          timestamp: result.timestamp,
          senderJid: session.numberJid ?? '',
          type: media?.kind ?? 'text',
          text: payload.text,
          ...(media ? { media } : {}),
        },
        ctx.log,
      );
      return { ...result, senderJid: session.numberJid ?? '' };
    },
  };
}
