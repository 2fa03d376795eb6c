import { toJpeg } from './image.js';

/** WhatsApp shows profile pictures at most this large. */
export const PROFILE_PICTURE_MAX_SIDE = 640;
export const PROFILE_PICTURE_QUALITY = 90;

/**
 * A client's picture as the profile takes it: JPEG quality 90, fitting inside 640x640 (never enlarged).
 * Accepts JPEG, PNG, WebP and GIF (first frame), sniffed from the bytes.
 * @throws ImageRejectedError (not an image, another format, too many pixels, undecodable)
 */
export async function toProfilePicture(bytes: Buffer): Promise<Buffer> {
  return (await toJpeg(bytes, { maxSide: PROFILE_PICTURE_MAX_SIDE, quality: PROFILE_PICTURE_QUALITY })).data;
}
