import type { Logger } from 'pino';
import type { MediaConfig } from '../../config/config.js';
import { AppError, isNotConnected } from '../../errors.js';
import { downloadMedia } from '../../media/media-source.js';
import { prepareMedia } from '../../media/outgoing-media.js';
import type { MsgNetSession } from '../../msgnet/msgnet-driver.js';
import type { Reply } from './flow-replies.js';

export type SendableReply = Exclude<Reply, { kind: 'wait' }>;

/**
 * Sends one reply of a flow and returns the message id. A media bubble is downloaded through safe fetch
 * and checked like any media sent; when that fails its link is sent as text, so the contact still gets it.
 * `gate` runs right before the network send (the owner check: it throws when the lease is not ours);
 * `messageId` is the id recorded before the send (a repeat under it is one message on the network).
 */
export async function sendReply(
  session: MsgNetSession,
  to: string,
  reply: SendableReply,
  media: MediaConfig,
  log: Logger,
  gate: () => void,
  messageId: string,
): Promise<string> {
  const options = { messageId };
  if (reply.kind !== 'media') gate();
  switch (reply.kind) {
    case 'text':
      return (await session.messages.sendText(to, reply.text, options)).messageId;
    case 'buttons':
      return (
        await session.messages.sendContent(to, { kind: 'buttons', text: reply.text, buttons: reply.buttons }, options)
      ).messageId;
    case 'payment':
      return (await session.messages.sendContent(to, { kind: 'pix', payment: reply.payment }, options)).messageId;
    case 'media': {
      let prepared;
      try {
        const loaded = await downloadMedia(reply.url, media);
        prepared = await prepareMedia(reply.media, loaded.bytes, {
          ...(loaded.fileName ? { fileName: loaded.fileName } : {}),
          opusAudio: false,
          maxBytes: media.maxBytes,
        });
      } catch (err) {
        if (!(err instanceof AppError) || isNotConnected(err)) throw err;
        log.warn({ err, url: reply.url }, 'chatbot media could not be prepared; sending its link');
        gate();
        return (await session.messages.sendText(to, reply.url, options)).messageId;
      }
      gate();
      const sent = await session.messages.sendMedia(
        to,
        {
          kind: reply.media,
          data: prepared.data,
          mimetype: prepared.mimetype,
          ...(prepared.fileName ? { fileName: prepared.fileName } : {}),
          ...(prepared.seconds ? { seconds: prepared.seconds } : {}),
          ...(reply.media === 'audio' ? { ptt: false } : {}),
        },
        options,
      );
      return sent.messageId;
    }
  }
}
