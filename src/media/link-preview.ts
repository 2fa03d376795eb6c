import type { Logger } from 'pino';
import type { MediaConfig } from '../config/config.js';
import type { LinkPreview } from '../msgnet/msgnet-driver.js';
import { toJpeg } from './image.js';
import { safeFetch } from './safe-fetch.js';

/** A page's head is enough: larger pages are cut here (the fetch stops at the limit and is abandoned). */
const PAGE_BYTES = 512 * 1024;
const THUMBNAIL_BYTES = 2 * 1024 * 1024;
/** WhatsApp shows the thumbnail at most this wide. */
const THUMBNAIL_SIDE = 192;
const PREVIEW_TIMEOUT_MS = 5_000;

const LINK = /\bhttps?:\/\/[^\s<>"']+/i;

/** The first http(s) link of a text, trailing punctuation excluded. */
export function firstLink(text: string): string | undefined {
  return LINK.exec(text)?.[0].replace(/[.,;:!?)\]]+$/, '');
}

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", '#39': "'" };

function decode(value: string): string {
  return value
    .replace(/&(amp|lt|gt|quot|apos|#39);/g, (_, name: string) => ENTITIES[name]!)
    .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code)))
    .replace(/\s+/g, ' ')
    .trim();
}

/** The `content` of `<meta property|name="key">`, in either attribute order. */
function meta(html: string, key: string): string | undefined {
  const name = key.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  const after = new RegExp(`<meta[^>]+(?:property|name)=["']${name}["'][^>]*content=["']([^"']*)["']`, 'i');
  const before = new RegExp(`<meta[^>]+content=["']([^"']*)["'][^>]*(?:property|name)=["']${name}["']`, 'i');
  const found = after.exec(html)?.[1] ?? before.exec(html)?.[1];
  return found ? decode(found) : undefined;
}

/** Title, description and image of a page's head (Open Graph first, then the plain tags). */
export function pageCard(html: string): { title?: string; description?: string; image?: string } {
  const title = meta(html, 'og:title') ?? decode(/<title[^>]*>([^<]*)<\/title>/i.exec(html)?.[1] ?? '');
  const description = meta(html, 'og:description') ?? meta(html, 'description');
  const image = meta(html, 'og:image');
  return {
    ...(title ? { title: title.slice(0, 256) } : {}),
    ...(description ? { description: description.slice(0, 512) } : {}),
    ...(image ? { image } : {}),
  };
}

/**
 * The preview card of a text's first link, fetched at the edge through the address policy like any client
 * URL. A preview is a nicety: any failure (no link, a refused address, no title) sends the text without
 * one, and is only logged.
 */
export async function buildLinkPreview(
  text: string,
  limits: MediaConfig,
  log: Logger,
): Promise<LinkPreview | undefined> {
  const url = firstLink(text);
  if (!url) return undefined;
  const fetchOptions = { allowPrivate: limits.allowPrivateUrls, timeoutMs: PREVIEW_TIMEOUT_MS };
  try {
    const page = await safeFetch(url, { ...fetchOptions, maxBytes: PAGE_BYTES });
    if (!/html/i.test(page.contentType ?? '')) return undefined;
    const card = pageCard(page.bytes.toString('utf8'));
    if (!card.title) return undefined;
    let thumbnail: string | undefined;
    if (card.image) {
      const imageUrl = new URL(card.image, page.finalUrl).toString();
      thumbnail = await safeFetch(imageUrl, { ...fetchOptions, maxBytes: THUMBNAIL_BYTES })
        .then(async (image) =>
          (await toJpeg(image.bytes, { maxSide: THUMBNAIL_SIDE, quality: 70 })).data.toString('base64'),
        )
        .catch((err: unknown) => {
          log.debug({ err, url: imageUrl }, 'no thumbnail for a link preview');
          return undefined;
        });
    }
    return {
      url,
      title: card.title,
      ...(card.description ? { description: card.description } : {}),
      ...(thumbnail ? { thumbnail } : {}),
    };
  } catch (err) {
    log.debug({ err, url }, 'no link preview');
    return undefined;
  }
}
