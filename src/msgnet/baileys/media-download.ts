import type { Readable } from 'node:stream';
import { downloadMediaMessage } from '@whiskeysockets/baileys';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { PayloadTooLargeError, TimeoutError } from '../../errors.js';
import type { BaileysSocket } from './socket-port.js';

/**
 * Opens the decrypted media of a received message (tests pass a fake; WhatsApp's CDN is not reachable
 * here). `fetchOptions` carries the instance's proxy dispatcher, undefined without a proxy.
 */
export type MediaDownloader = (
  raw: WAMessage,
  sock: BaileysSocket,
  log: Logger,
  fetchOptions: RequestInit | undefined,
) => Promise<Readable>;

export const downloadFromNetwork: MediaDownloader = async (raw, sock, log, fetchOptions) =>
  // Baileys' downloads use native fetch, which takes the proxy only as `options.dispatcher` (#2758). An
  // expired CDN link is refreshed by asking the sender's phone to re-upload (`updateMediaMessage`).
  downloadMediaMessage(raw, 'stream', fetchOptions ? { options: fetchOptions } : {}, {
    logger: log,
    reuploadRequest: sock.updateMediaMessage,
  });

/** Reads a stream into memory, giving up (and destroying it) past `maxBytes` or when `signal` aborts. */
export async function readBounded(stream: Readable, maxBytes: number, signal?: AbortSignal): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  const abort = () => stream.destroy(new TimeoutError('Media download took too long'));
  signal?.addEventListener('abort', abort, { once: true });
  try {
    if (signal?.aborted) abort();
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      size += chunk.length;
      if (size > maxBytes) {
        stream.destroy();
        throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
      }
      chunks.push(chunk);
    }
  } finally {
    signal?.removeEventListener('abort', abort);
  }
  return Buffer.concat(chunks);
}
