import type { Readable } from 'node:stream';
import { downloadMediaMessage } from '@whiskeysockets/baileys';
import type { WAMessage } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import { PayloadTooLargeError } from '../../errors.js';
import type { BaileysSocket } from './socket-port.js';

/** Opens the decrypted media of a received message (tests pass a fake; WhatsApp's CDN is not reachable here). */
export type MediaDownloader = (raw: WAMessage, sock: BaileysSocket, log: Logger) => Promise<Readable>;

export const downloadFromNetwork: MediaDownloader = async (raw, sock, log) =>
  // An expired CDN link is refreshed by asking the sender's phone to re-upload (`updateMediaMessage`).
  downloadMediaMessage(raw, 'stream', {}, { logger: log, reuploadRequest: sock.updateMediaMessage });

/** Reads a stream into memory, giving up (and destroying it) past `maxBytes`. */
export async function readBounded(stream: Readable, maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > maxBytes) {
      stream.destroy();
      throw new PayloadTooLargeError(`Media larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks);
}
