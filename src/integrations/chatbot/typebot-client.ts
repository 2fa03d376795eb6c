import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { z } from 'zod';
import { UnavailableError, ValidationError } from '../../errors.js';
import { pinnedLookup } from '../../security/pinned-lookup.js';
import { checkUrl, checkUrlSyntax } from '../../security/url-policy.js';
import type { Resolver } from '../../security/url-policy.js';

/**
 * Typebot's chat API (the viewer's `/api/v1/typebots/{publicId}/startChat` and
 * `/api/v1/sessions/{sessionId}/continueChat`, engine v2). Every call is checked against the URL policy
 * and pinned to the checked addresses, has a deadline and a response size limit, and follows no redirect.
 */

const item = z.looseObject({
  id: z.string(),
  content: z.string().optional(),
  value: z.string().optional(),
  title: z.string().optional(),
});

const responseSchema = z.looseObject({
  sessionId: z.string().optional(),
  messages: z
    .array(z.looseObject({ id: z.string().optional(), type: z.string(), content: z.unknown().optional() }))
    .default([]),
  input: z
    .looseObject({
      id: z.string().optional(),
      type: z.string(),
      items: z.array(item).optional(),
      options: z.looseObject({ isMultipleChoice: z.boolean().optional() }).nullish(),
    })
    .nullish(),
  clientSideActions: z
    .array(
      z.looseObject({
        type: z.string(),
        wait: z.looseObject({ secondsToWaitFor: z.union([z.number(), z.string()]).optional() }).optional(),
        lastBubbleBlockId: z.string().optional(),
        expectsDedicatedReply: z.boolean().optional(),
      }),
    )
    .nullish(),
});

/** What startChat and continueChat answer (the parts the gateway uses). */
export type TypebotResponse = z.infer<typeof responseSchema>;
export type TypebotInput = NonNullable<TypebotResponse['input']>;

/** A reply to the flow: text, with the id of the choice item a button stood for. */
export type TypebotMessage = string | { type: 'text'; text: string; metadata?: { replyId: string } };

/** Typebot could not be reached or refused the call (also a flow that is not published). */
export class TypebotRequestError extends UnavailableError {
  constructor(
    message: string,
    readonly status?: number,
  ) {
    super(`Chatbot flow call failed: ${message}`);
  }
}

/** continueChat answered 404: the flow ended or Typebot forgot the session. */
export class TypebotSessionGoneError extends TypebotRequestError {}

export interface TypebotClientOptions {
  /** Deadline of one call, connect to last byte. */
  timeoutMs: number;
  allowPrivateUrls: boolean;
  /** @default 2 MiB */
  maxResponseBytes?: number;
  resolve?: Resolver;
}

/** A published flow's viewer URL split into the viewer's base and the flow's public id (last path segment). */
export function flowAddress(viewerUrl: string): { base: string; publicId: string } {
  let url: URL;
  try {
    url = new URL(viewerUrl);
  } catch {
    throw new ValidationError('url is not a valid URL');
  }
  const segments = url.pathname.split('/').filter(Boolean);
  const publicId = segments.pop();
  if (!publicId) {
    throw new ValidationError('url must name a published flow, such as https://viewer.example.com/my-flow');
  }
  return {
    base: `${url.origin}${segments.length ? `/${segments.join('/')}` : ''}`,
    publicId: decodeURIComponent(publicId),
  };
}

/** Checks a bot's flow URL when it is set: form, private ranges (literal hosts), and a public id. */
export function checkFlowUrl(raw: string, allowPrivateUrls: boolean): string {
  const checked = checkUrlSyntax(raw.trim(), { allowPrivate: allowPrivateUrls });
  if ('reason' in checked) throw new ValidationError(`url: ${checked.reason}`);
  const url = checked.url;
  url.hash = '';
  url.search = '';
  flowAddress(url.toString());
  return url.toString().replace(/\/+$/, '');
}

export class TypebotClient {
  constructor(private readonly options: TypebotClientOptions) {}

  /** Starts the flow; Typebot answers with the new session's id and the first bubbles. */
  async startChat(
    viewerUrl: string,
    body: { prefilledVariables: Record<string, string>; message?: TypebotMessage },
    signal?: AbortSignal,
  ): Promise<TypebotResponse & { sessionId: string }> {
    const { base, publicId } = flowAddress(viewerUrl);
    const res = await this.#post(
      `${base}/api/v1/typebots/${encodeURIComponent(publicId)}/startChat`,
      { ...body, isStreamEnabled: false, isOnlyRegistering: false, textBubbleContentFormat: 'richText' },
      false,
      signal,
    );
    if (!res.sessionId) throw new TypebotRequestError('startChat answered without a sessionId');
    return res as TypebotResponse & { sessionId: string };
  }

  /** Continues a session; no message resumes it after a `wait` that expects a dedicated reply. */
  async continueChat(
    viewerUrl: string,
    sessionId: string,
    message: TypebotMessage | undefined,
    signal?: AbortSignal,
  ): Promise<TypebotResponse> {
    const { base } = flowAddress(viewerUrl);
    return this.#post(
      `${base}/api/v1/sessions/${encodeURIComponent(sessionId)}/continueChat`,
      { ...(message !== undefined ? { message } : {}), textBubbleContentFormat: 'richText' },
      true,
      signal,
    );
  }

  async #post(
    target: string,
    body: unknown,
    continuing: boolean,
    signal: AbortSignal | undefined,
  ): Promise<TypebotResponse> {
    const checked = await checkUrl(target, { allowPrivate: this.options.allowPrivateUrls }, this.options.resolve);
    if ('reason' in checked) throw new TypebotRequestError(`URL refused: ${checked.reason}`);
    const payload = JSON.stringify(body);
    const { status, text } = await this.#send(checked.url, checked.addresses, payload, signal);
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = undefined;
    }
    if (status < 200 || status >= 300) {
      const message = (json as { message?: unknown } | undefined)?.message;
      const reason = `HTTP ${status}${typeof message === 'string' && message ? ` ${message.slice(0, 200)}` : ''}`;
      throw continuing && status === 404
        ? new TypebotSessionGoneError(reason, status)
        : new TypebotRequestError(reason, status);
    }
    const parsed = responseSchema.safeParse(json);
    if (!parsed.success) throw new TypebotRequestError('the answer is not a chat response');
    return parsed.data;
  }

  #send(
    url: URL,
    addresses: string[],
    payload: string,
    signal: AbortSignal | undefined,
  ): Promise<{ status: number; text: string }> {
    const limit = this.options.maxResponseBytes ?? 2 * 1024 * 1024;
    const request = url.protocol === 'https:' ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = request(
        url,
        {
          method: 'POST',
          lookup: pinnedLookup(addresses),
          agent: false,
          ...(signal ? { signal } : {}),
          headers: {
            'content-type': 'application/json',
            'content-length': Buffer.byteLength(payload),
            accept: 'application/json',
            'user-agent': 'Switchboard-Chatbot/1',
          },
        },
        (res) => {
          const chunks: Buffer[] = [];
          let total = 0;
          res.on('data', (chunk: Buffer) => {
            total += chunk.length;
            if (total > limit) {
              req.destroy(new Error(`answer larger than ${limit} bytes`));
              return;
            }
            chunks.push(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
          res.on('error', (err) => reject(new TypebotRequestError(err.message)));
        },
      );
      const deadline = setTimeout(
        () => req.destroy(new Error(`no answer within ${this.options.timeoutMs} ms`)),
        this.options.timeoutMs,
      );
      req.on('error', (err) => reject(new TypebotRequestError(err.message)));
      req.on('close', () => clearTimeout(deadline));
      req.end(payload);
    });
  }
}
