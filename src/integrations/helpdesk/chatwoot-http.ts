import { setTimeout as wait } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { pinnedLookup } from '../../security/pinned-lookup.js';
import { checkUrl } from '../../security/url-policy.js';
import type { Resolver } from '../../security/url-policy.js';
import { NamedError } from '../../errors.js';
import { backoffDelay } from '../../util/backoff.js';

/**
 * Why a call to Chatwoot failed:
 * - `http`: Chatwoot answered with an error status;
 * - `network`: no answer (connection refused or reset, DNS);
 * - `timeout`: no complete answer within the request's deadline;
 * - `refused`: the URL policy refuses the address (private network without ALLOW_PRIVATE_URLS);
 * - `protocol`: an answer that is not what the API documents;
 * - `aborted`: the caller gave up (the actor stops, or an operator's change preempts the call).
 */
export type ChatwootFailure = 'http' | 'network' | 'timeout' | 'refused' | 'protocol' | 'aborted';

export class ChatwootError extends NamedError {
  constructor(
    readonly failure: ChatwootFailure,
    message: string,
    readonly status?: number,
  ) {
    super(message);
  }

  /** Worth trying again later: Chatwoot may come back. A 4xx will not change by itself. */
  get retryable(): boolean {
    if (this.failure === 'network' || this.failure === 'timeout') return true;
    return this.failure === 'http' && (this.status === 429 || (this.status ?? 0) >= 500);
  }

  /** The token or the account is refused: nothing will work until the operator fixes the settings. */
  get rejectsCredentials(): boolean {
    return this.failure === 'http' && (this.status === 401 || this.status === 403);
  }
}

/** A file of a multipart body. */
export interface FilePart {
  name: string;
  fileName: string;
  contentType: string;
  data: Buffer;
}

export type RequestBody = { json: unknown } | { form: (readonly [string, string] | FilePart)[] };

export interface ChatwootHttpOptions {
  /** The installation's URL (a path prefix is kept). */
  baseUrl: string;
  apiToken: string;
  /** One request, connect to last byte. */
  timeoutMs: number;
  /** Further attempts of a retryable failure (see `retrying`). */
  retries: number;
  allowPrivateUrls: boolean;
  /** First backoff between attempts, doubled each time, with jitter. @default 250 */
  retryBaseMs?: number;
  /** DNS resolution; the system resolver unless a test injects one. */
  resolve?: Resolver;
}

const MAX_RESPONSE_BYTES = 4 * 1024 * 1024;

async function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  const done = await wait(ms, true, { signal }).catch(() => false);
  if (!done) throw new ChatwootError('aborted', 'Chatwoot call aborted');
}

/** The message Chatwoot put in an error body (`message`, `error`, or `errors[]`), if any. */
function detailOf(body: unknown): string {
  if (typeof body === 'string') return body.trim().slice(0, 200);
  if (typeof body !== 'object' || body === null) return '';
  const b = body as { message?: unknown; error?: unknown; errors?: unknown };
  if (typeof b.message === 'string') return b.message;
  if (typeof b.error === 'string') return b.error;
  if (Array.isArray(b.errors)) return b.errors.map((e) => (typeof e === 'string' ? e : JSON.stringify(e))).join(', ');
  return '';
}

function encodeMultipart(parts: (readonly [string, string] | FilePart)[]): { body: Buffer; contentType: string } {
  const boundary = `----switchboard${randomBytes(12).toString('hex')}`;
  const quote = (s: string) => s.replace(/["\r\n\\]/g, '_');
  const chunks: Buffer[] = [];
  for (const part of parts) {
    if (Array.isArray(part)) {
      const [name, value] = part as readonly [string, string];
      chunks.push(
        Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="${quote(name)}"\r\n\r\n${value}\r\n`),
      );
    } else {
      const file = part as FilePart;
      chunks.push(
        Buffer.from(
          `--${boundary}\r\nContent-Disposition: form-data; name="${quote(file.name)}"; filename="${quote(file.fileName)}"\r\n` +
            `Content-Type: ${file.contentType}\r\n\r\n`,
        ),
        file.data,
        Buffer.from('\r\n'),
      );
    }
  }
  chunks.push(Buffer.from(`--${boundary}--\r\n`));
  return { body: Buffer.concat(chunks), contentType: `multipart/form-data; boundary=${boundary}` };
}

/**
 * HTTP to one Chatwoot installation with its account token (`api_access_token` header). Each request is
 * checked by the URL policy and pinned to the checked addresses, has one deadline, and can be aborted;
 * `retrying` runs an operation again after retryable failures with exponential backoff.
 */
export class ChatwootHttp {
  readonly #base: string;

  constructor(private readonly options: ChatwootHttpOptions) {
    this.#base = options.baseUrl.replace(/\/+$/, '');
  }

  /**
   * Runs `op` (attempt 0, 1, …) until it succeeds, fails for good, or the retries are spent. Only
   * network errors, timeouts, 429 and 5xx are tried again; a 4xx never is. `op` gets the attempt number
   * so that a non-idempotent operation can first look for what an attempt that timed out may have done.
   */
  async retrying<T>(op: (attempt: number) => Promise<T>, signal?: AbortSignal): Promise<T> {
    const base = this.options.retryBaseMs ?? 250;
    for (let attempt = 0; ; attempt++) {
      try {
        return await op(attempt);
      } catch (err) {
        if (!(err instanceof ChatwootError) || !err.retryable || attempt >= this.options.retries) throw err;
        await sleep(backoffDelay(attempt, { baseMs: base, maxMs: Infinity, jitter: 'equal' }), signal);
      }
    }
  }

  /** One request; `path` is below the installation's URL. @throws ChatwootError */
  async request<T>(method: string, path: string, body?: RequestBody, signal?: AbortSignal): Promise<T> {
    if (signal?.aborted) throw new ChatwootError('aborted', 'Chatwoot call aborted');
    const what = `${method} ${path.replace(/^\/api\/v1\/accounts\/\d+/, '').split('?')[0]}`;
    // One deadline for the whole request, name resolution included.
    const deadlineAt = Date.now() + this.options.timeoutMs;
    const tooLate = () =>
      new ChatwootError('timeout', `Chatwoot ${what}: no answer within ${this.options.timeoutMs} ms`);
    let resolveTimer: NodeJS.Timeout | undefined;
    const checked = await Promise.race([
      checkUrl(this.#base + path, { allowPrivate: this.options.allowPrivateUrls }, this.options.resolve),
      new Promise<never>((_, reject) => {
        resolveTimer = setTimeout(() => reject(tooLate()), this.options.timeoutMs);
      }),
    ]).finally(() => clearTimeout(resolveTimer));
    if ('reason' in checked) {
      const unresolved = checked.reason.includes('could not be resolved');
      throw new ChatwootError(unresolved ? 'network' : 'refused', `Chatwoot URL refused: ${checked.reason}`);
    }
    let payload: Buffer | undefined;
    const headers: Record<string, string> = {
      api_access_token: this.options.apiToken,
      accept: 'application/json',
      'user-agent': 'Switchboard-Helpdesk/1',
    };
    if (body && 'json' in body) {
      payload = Buffer.from(JSON.stringify(body.json));
      headers['content-type'] = 'application/json';
    } else if (body) {
      const encoded = encodeMultipart(body.form);
      payload = encoded.body;
      headers['content-type'] = encoded.contentType;
    }
    if (payload) headers['content-length'] = String(payload.length);
    const target = checked.url;
    const send = target.protocol === 'https:' ? httpsRequest : httpRequest;
    const { status, text, contentType } = await new Promise<{ status: number; text: string; contentType: string }>(
      (resolve, reject) => {
        let settled = false;
        const fail = (err: ChatwootError) => {
          if (settled) return;
          settled = true;
          req.destroy();
          reject(err);
        };
        const req = send(
          target,
          { method, headers, lookup: pinnedLookup(checked.addresses), agent: false },
          (res: IncomingMessage) => {
            const chunks: Buffer[] = [];
            let size = 0;
            res.on('data', (chunk: Buffer) => {
              size += chunk.length;
              if (size > MAX_RESPONSE_BYTES) {
                fail(new ChatwootError('protocol', `Chatwoot ${what}: answer larger than ${MAX_RESPONSE_BYTES} bytes`));
              } else chunks.push(chunk);
            });
            res.on('end', () => {
              if (settled) return;
              settled = true;
              resolve({
                status: res.statusCode ?? 0,
                text: Buffer.concat(chunks).toString('utf8'),
                contentType: String(res.headers['content-type'] ?? ''),
              });
            });
            res.on('error', (err) => fail(new ChatwootError('network', `Chatwoot ${what}: ${err.message}`)));
          },
        );
        const deadline = setTimeout(() => fail(tooLate()), Math.max(0, deadlineAt - Date.now()));
        const onAbort = () => fail(new ChatwootError('aborted', 'Chatwoot call aborted'));
        signal?.addEventListener('abort', onAbort, { once: true });
        req.on('error', (err) => fail(new ChatwootError('network', `Chatwoot ${what}: ${err.message}`)));
        req.on('close', () => {
          clearTimeout(deadline);
          signal?.removeEventListener('abort', onAbort);
        });
        req.end(payload);
      },
    );
    let parsed: unknown = text;
    if (contentType.includes('json') && text) {
      try {
        parsed = JSON.parse(text);
      } catch {
        if (status >= 200 && status < 300) {
          throw new ChatwootError('protocol', `Chatwoot ${what}: malformed JSON answer`);
        }
      }
    }
    if (status < 200 || status >= 300) {
      const detail = detailOf(parsed);
      throw new ChatwootError('http', `Chatwoot ${what}: HTTP ${status}${detail ? ` ${detail}` : ''}`, status);
    }
    return parsed as T;
  }
}
