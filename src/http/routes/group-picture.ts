import type { MediaConfig } from '../../config/config.js';
import { ValidationError } from '../../errors.js';
import { ImageRejectedError } from '../../media/image.js';
import { decodeBase64Media, downloadMedia } from '../../media/media-source.js';
import { toProfilePicture } from '../../media/profile-picture.js';

/**
 * A group's picture as a client gives it (an http(s) URL, a `data:` URI or bare base64), made the JPEG a
 * profile picture is (quality 90, within 640x640), as base64. URLs go through the address policy.
 */
export async function groupPicture(value: string, media: MediaConfig): Promise<string> {
  const bytes = /^https?:\/\//i.test(value)
    ? (await downloadMedia(value, media)).bytes
    : decodeBase64Media(value, 'picture', media.maxBytes).bytes;
  try {
    return (await toProfilePicture(bytes)).toString('base64');
  } catch (err) {
    if (!(err instanceof ImageRejectedError)) throw err;
    throw new ValidationError(`Invalid picture: ${err.message}`, { cause: err });
  }
}
