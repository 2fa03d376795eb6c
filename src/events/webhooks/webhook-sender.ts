import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { checkUrl } from '../../security/url-policy.js';
import type { Resolver } from '../../security/url-policy.js';
import { pinnedLookup } from '../../security/pinned-lookup.js';

/** How one POST went. `retryable` failures are tried again; the others go to the dead letters at once. */
export type SendResult =
  { ok: true; status: number } | { ok: false; retryable: boolean; error: string; retryAfterMs?: number };

export interface WebhookSenderOptions {
  allowPrivateUrls: boolean;
  /** Per attempt, connect to last byte. @default 10000 */
  timeoutMs: number;
  resolve?: Resolver;
}

/** `Retry-After` as seconds or an HTTP date, in ms from now. */
export function parseRetryAfter(value: string | undefined, now = Date.now()): number | undefined {
  if (!value) return undefined;
  if (/^\d+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/**
 * POSTs one webhook body. The target is checked against private ranges at every attempt (DNS answers
 * change) and the connection is pinned to the checked addresses; redirects are not followed.
 */
export class WebhookSender {
  constructor(private readonly options: WebhookSenderOptions) {}

  async send(url: string, body: string, headers: Record<string, string>): Promise<SendResult> {
    const checked = await checkUrl(url, { allowPrivate: this.options.allowPrivateUrls }, this.options.resolve);
    if ('reason' in checked) {
      // An unresolvable host may come back; a refused address will not.
      return {
        ok: false,
        retryable: checked.reason.includes('could not be resolved'),
        error: `URL refused: ${checked.reason}`,
      };
    }
    const target = checked.url;
    const request = target.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise<SendResult>((resolve) => {
      const req = request(
        target,
        {
          method: 'POST',
          lookup: pinnedLookup(checked.addresses),
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(body),
            'user-agent': 'Switchboard-Webhook/1',
            ...headers,
          },
          timeout: this.options.timeoutMs,
        },
        (res) => {
          // Read (and drop) the body so the socket can be reused; receivers' answers are not kept.
          res.resume();
          res.on('end', () => {
            const status = res.statusCode ?? 0;
            if (status >= 200 && status < 300) resolve({ ok: true, status });
            else if (status === 429 || status >= 500) {
              const retryAfterMs = parseRetryAfter(res.headers['retry-after']);
              resolve({
                ok: false,
                retryable: true,
                error: `HTTP ${status}`,
                ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
              });
            } else resolve({ ok: false, retryable: false, error: `HTTP ${status}` });
          });
          res.on('error', (err) => resolve({ ok: false, retryable: true, error: err.message }));
        },
      );
      const deadline = setTimeout(
        () => req.destroy(new Error(`timed out after ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      req.on('timeout', () => req.destroy(new Error(`timed out after ${this.options.timeoutMs} ms`)));
      req.on('error', (err) => resolve({ ok: false, retryable: true, error: err.message }));
      req.on('close', () => clearTimeout(deadline));
      req.end(body);
    });
  }
}
