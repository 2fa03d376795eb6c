import sharp from 'sharp';
import { sniffMedia } from './sniff.js';
import { NamedError } from '../errors.js';

/** Decoded size above which an image is refused before it is decoded (a decompression bomb). */
export const MAX_INPUT_PIXELS = 40_000_000;

/** Formats the service decodes; GIF and animated WebP give their first frame. */
const DECODABLE = new Set(['image/jpeg', 'image/png', 'image/webp', 'image/gif']);

export type ImageProblem = 'not_image' | 'unsupported' | 'too_large' | 'corrupt';

/** Why an image was not converted; each caller words it for its endpoint. */
export class ImageRejectedError extends NamedError {
  constructor(
    readonly problem: ImageProblem,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export interface JpegOptions {
  /** Fit inside a square of this side, never enlarging; unset keeps the size. */
  maxSide?: number;
  quality: number;
}

/**
 * Re-encodes an image as JPEG. The type is sniffed from the bytes; the dimensions are read from the header
 * and checked before any pixel is decoded, and decoding is limited again by libvips itself.
 */
export async function toJpeg(bytes: Buffer, o: JpegOptions): Promise<{ data: Buffer; width: number; height: number }> {
  const type = sniffMedia(bytes);
  if (type?.kind !== 'image') {
    throw new ImageRejectedError('not_image', 'the data is not a JPEG, PNG, WebP or GIF image');
  }
  if (!DECODABLE.has(type.mime)) {
    throw new ImageRejectedError('unsupported', `${type.mime} is not supported; send JPEG, PNG, WebP or GIF`);
  }
  let width: number;
  let height: number;
  try {
    // The header only: no limit here, so that the check below can say how large the image is.
    ({ width, height } = await sharp(bytes, { limitInputPixels: false }).metadata());
  } catch (err) {
    throw new ImageRejectedError('corrupt', (err as Error).message, { cause: err });
  }
  if (width * height > MAX_INPUT_PIXELS) {
    throw new ImageRejectedError(
      'too_large',
      `the image is ${width}x${height} pixels; at most ${MAX_INPUT_PIXELS} pixels are accepted`,
    );
  }
  try {
    let pipeline = sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' }).rotate();
    if (o.maxSide) pipeline = pipeline.resize(o.maxSide, o.maxSide, { fit: 'inside', withoutEnlargement: true });
    // JPEG has no alpha: transparent areas become white rather than black.
    const { data, info } = await pipeline
      .flatten({ background: '#ffffff' })
      .jpeg({ quality: o.quality })
      .toBuffer({ resolveWithObject: true });
    return { data, width: info.width, height: info.height };
  } catch (err) {
    throw new ImageRejectedError('corrupt', (err as Error).message, { cause: err });
  }
}

/** WhatsApp's sticker canvas: a square of this side. */
export const STICKER_SIDE = 512;

/**
 * An image as a sticker: WebP on a transparent 512×512 canvas, the image fitted inside (first frame of an
 * animation). The same sniffing and pixel limits as `toJpeg`.
 */
export async function toSticker(bytes: Buffer): Promise<Buffer> {
  const type = sniffMedia(bytes);
  if (type?.kind !== 'image') {
    throw new ImageRejectedError('not_image', 'the data is not a JPEG, PNG, WebP or GIF image');
  }
  if (!DECODABLE.has(type.mime)) {
    throw new ImageRejectedError('unsupported', `${type.mime} is not supported; send JPEG, PNG, WebP or GIF`);
  }
  try {
    return await sharp(bytes, { limitInputPixels: MAX_INPUT_PIXELS, failOn: 'error' })
      .rotate()
      .resize(STICKER_SIDE, STICKER_SIDE, { fit: 'contain', background: { r: 0, g: 0, b: 0, alpha: 0 } })
      .webp({ quality: 80 })
      .toBuffer();
  } catch (err) {
    const message = (err as Error).message;
    const tooLarge = /pixel limit/i.test(message);
    throw new ImageRejectedError(tooLarge ? 'too_large' : 'corrupt', message, { cause: err });
  }
}
