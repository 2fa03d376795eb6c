/** What a base64 delivery says when the kept copy of its file has expired (MEDIA_BLOB_TTL) before it went out. */
export const MEDIA_EXPIRED = 'the media is no longer kept for base64 delivery (MEDIA_BLOB_TTL passed)';

/**
 * The envelope of a base64 webhook delivery with the received file put into `data.message.media.base64`,
 * or, when the copy is gone, with `media.error` saying so. Anything that is not a media envelope is
 * returned unchanged.
 */
export function withMediaBase64(body: string, file: Buffer | undefined): string {
  let envelope: { data?: { message?: { media?: Record<string, unknown> | null } } };
  try {
    envelope = JSON.parse(body) as typeof envelope;
  } catch {
    return body;
  }
  const media = envelope.data?.message?.media;
  if (!media || typeof media !== 'object') return body;
  if (file) media.base64 = file.toString('base64');
  else media.error ??= MEDIA_EXPIRED;
  return JSON.stringify(envelope);
}
