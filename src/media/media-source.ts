import type { MediaConfig } from '../config/config.js';
import { ValidationError } from '../errors.js';
import { safeFetch } from './safe-fetch.js';

/** Media a client gives: bytes downloaded from a URL, or sent inline as base64. */
export interface LoadedMedia {
  bytes: Buffer;
  /** What the sender claimed (Content-Type, or the data URL's type); a hint only, the bytes are sniffed. */
  declaredMime: string | undefined;
  /** The last path segment of the URL, when it looks like a file name. */
  fileName: string | undefined;
}

const DATA_URL = /^data:([^;,]*)((?:;[^;,]*)*);base64,/i;
const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;

/**
 * Decodes base64, raw or as a `data:<type>;base64,` URL. `field` names the body field in the error.
 * @throws ValidationError when it is not base64, is empty, or decodes to more than `maxBytes`.
 */
export function decodeBase64Media(raw: string, field: string, maxBytes: number): LoadedMedia {
  const prefix = DATA_URL.exec(raw);
  if (raw.startsWith('data:') && !prefix) {
    throw new ValidationError(`Invalid request body: ${field} must be a base64 data URL`);
  }
  const body = (prefix ? raw.slice(prefix[0].length) : raw).replace(/\s+/g, '');
  if (!body || !BASE64.test(body)) throw new ValidationError(`Invalid request body: ${field} is not valid base64`);
  if (Math.floor((body.length * 3) / 4) > maxBytes + 2) {
    throw new ValidationError(`Invalid request body: ${field} is larger than ${maxBytes} bytes`);
  }
  const bytes = Buffer.from(body, /[-_]/.test(body) ? 'base64url' : 'base64');
  if (bytes.length === 0) throw new ValidationError(`Invalid request body: ${field} is empty`);
  if (bytes.length > maxBytes) {
    throw new ValidationError(`Invalid request body: ${field} is larger than ${maxBytes} bytes`);
  }
  return { bytes, declaredMime: prefix?.[1] || undefined, fileName: undefined };
}

function safeDecode(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * Downloads a client's media URL through safe fetch (http(s) only, no internal addresses, size and time
 * limits). @throws FetchRefusedError | FetchFailedError
 */
export async function downloadMedia(url: string, limits: MediaConfig): Promise<LoadedMedia> {
  const fetched = await safeFetch(url, {
    allowPrivate: limits.allowPrivateUrls,
    maxBytes: limits.maxBytes,
    timeoutMs: limits.fetchTimeoutMs,
  });
  const contentType = fetched.contentType?.split(';')[0]?.trim().toLowerCase();
  const last = safeDecode(new URL(fetched.finalUrl).pathname.split('/').pop() ?? '');
  return {
    bytes: fetched.bytes,
    declaredMime: contentType || undefined,
    fileName: /^[^\\/:*?"<>|\u0000-\u001f]{1,200}\.[A-Za-z0-9]{1,10}$/.test(last) ? last : undefined,
  };
}

/** A client's media given as a `data:` URI or an http(s) URL (fetched through safe fetch). */
export async function loadMediaSource(value: string, field: string, limits: MediaConfig): Promise<LoadedMedia> {
  return value.startsWith('data:') ? decodeBase64Media(value, field, limits.maxBytes) : downloadMedia(value, limits);
}
