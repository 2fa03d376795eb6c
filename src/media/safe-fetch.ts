import { request as httpRequest } from 'node:http';
import type { IncomingMessage, RequestOptions } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pinnedLookup } from '../security/pinned-lookup.js';
import { AppError, ErrorCode, ValidationError } from '../errors.js';
import { checkUrl } from '../security/url-policy.js';
import type { Resolver } from '../security/url-policy.js';

/** What a node may download for a client, and how much. */
export interface SafeFetchOptions {
  /** ALLOW_PRIVATE_URLS: lifts the address-range check (development and tests only). */
  allowPrivate: boolean;
  /** Larger bodies are aborted as soon as they pass this. */
  maxBytes: number;
  /** Deadline of the whole download, redirects included. */
  timeoutMs: number;
  /** @default 3 */
  maxRedirects?: number;
  /** DNS resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
  /** Tests only: the address actually dialled for a checked one (a local server standing in for a public host). */
  dial?: (address: string) => string;
}

export interface FetchedBody {
  bytes: Buffer;
  /** The Content-Type header, as the server sent it. */
  contentType: string | undefined;
  /** The URL that answered, after redirects. */
  finalUrl: string;
}

/** The URL may not be fetched: its scheme, credentials, or an address in a blocked range (also after a redirect). */
export class FetchRefusedError extends ValidationError {
  constructor(readonly reason: string) {
    super(`URL refused: ${reason}`);
  }
}

/** The URL was allowed but no acceptable body came back: HTTP status, network error, time or size limit. */
export class FetchFailedError extends AppError {
  constructor(
    readonly reason: string,
    options?: { cause?: unknown },
  ) {
    super(ErrorCode.MediaDownloadFailed, `Failed to download media from URL: ${reason}`, options);
  }
}

const REDIRECTS = new Set([301, 302, 303, 307, 308]);
const DEFAULT_PORT = { 'http:': 80, 'https:': 443 } as const;

/**
 * The one downloader for every URL the service fetches for a client. Each hop (the URL, then every
 * redirect) is checked by the URL policy after DNS resolution, and the connection is made only to the
 * addresses that passed the check: a custom `lookup` pins them, so a second DNS answer (rebinding) cannot
 * send the request elsewhere.
 */
export async function safeFetch(raw: string, o: SafeFetchOptions): Promise<FetchedBody> {
  const maxRedirects = o.maxRedirects ?? 3;
  const signal = AbortSignal.timeout(o.timeoutMs);
  let target = raw;
  for (let hop = 0; ; hop++) {
    const checked = await checkUrl(target, { allowPrivate: o.allowPrivate }, o.resolve);
    if ('reason' in checked) {
      if (/could not be resolved/.test(checked.reason)) throw new FetchFailedError(checked.reason);
      throw new FetchRefusedError(hop === 0 ? checked.reason : `redirect refused: ${checked.reason}`);
    }
    const res = await get(checked.url, checked.addresses, o, signal);
    const status = res.statusCode ?? 0;
    if (REDIRECTS.has(status)) {
      res.destroy();
      const location = res.headers.location;
      if (!location) throw new FetchFailedError(`HTTP ${status} without a Location header`);
      if (hop >= maxRedirects) throw new FetchFailedError(`more than ${maxRedirects} redirects`);
      target = resolveLocation(location, checked.url);
      continue;
    }
    if (status < 200 || status >= 300) {
      res.destroy();
      throw new FetchFailedError(`HTTP ${status}`);
    }
    const bytes = await readBody(res, o, signal);
    return { bytes, contentType: res.headers['content-type'], finalUrl: checked.url.toString() };
  }
}

/** A relative Location is resolved against the URL that sent it; a malformed one is refused like a bad URL. */
function resolveLocation(location: string, base: URL): string {
  try {
    return new URL(location, base).toString();
  } catch {
    throw new FetchRefusedError('redirect to an invalid URL');
  }
}

function get(url: URL, addresses: string[], o: SafeFetchOptions, signal: AbortSignal): Promise<IncomingMessage> {
  const dialled = addresses.map((a) => o.dial?.(a) ?? a);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const options: RequestOptions = {
    method: 'GET',
    // An IP literal is dialled as is (Node skips the lookup for it); it passed the same check.
    host,
    port: url.port ? Number(url.port) : DEFAULT_PORT[url.protocol as keyof typeof DEFAULT_PORT],
    path: `${url.pathname}${url.search}`,
    headers: { 'user-agent': 'Switchboard media fetch', accept: '*/*', 'accept-encoding': 'identity', host: url.host },
    lookup: pinnedLookup(dialled),
    // No pooled sockets: a kept-alive connection could outlive the check it was made under.
    agent: false,
    signal,
  };
  const req = url.protocol === 'https:' ? httpsRequest(options) : httpRequest(options);
  return new Promise((resolve, reject) => {
    req.once('response', resolve);
    req.once('error', (err) => reject(networkFailure(err, signal, o.timeoutMs)));
    req.end();
  });
}

function networkFailure(err: unknown, signal: AbortSignal, timeoutMs: number): FetchFailedError {
  if (signal.aborted) return new FetchFailedError(`no complete answer within ${timeoutMs} ms`, { cause: err });
  const code = (err as { code?: string }).code;
  return new FetchFailedError(code ? `connection failed (${code})` : 'connection failed', { cause: err });
}

async function readBody(res: IncomingMessage, o: SafeFetchOptions, signal: AbortSignal): Promise<Buffer> {
  const tooLarge = () => new FetchFailedError(`the body is larger than ${o.maxBytes} bytes`);
  const declared = Number(res.headers['content-length']);
  if (Number.isFinite(declared) && declared > o.maxBytes) {
    res.destroy();
    throw tooLarge();
  }
  const chunks: Buffer[] = [];
  let total = 0;
  try {
    for await (const chunk of res as AsyncIterable<Buffer>) {
      total += chunk.length;
      if (total > o.maxBytes) {
        res.destroy();
        throw tooLarge();
      }
      chunks.push(chunk);
    }
  } catch (err) {
    if (err instanceof FetchFailedError) throw err;
    throw networkFailure(err, signal, o.timeoutMs);
  }
  return Buffer.concat(chunks, total);
}
