import { randomBytes } from 'node:crypto';
import { createServer } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Server } from 'node:https';
import type { SelfSignedCert } from './self-signed-cert.js';
import { closeServer, listenOn } from '../util/http-listen.js';

/** Uploads are refused past this size, as WhatsApp's `maxContentLengthBytes` says. */
const MAX_UPLOAD_BYTES = 100 * 1024 * 1024;

/**
 * Encrypted media blobs, as WhatsApp's media servers keep them: the server stores what a device
 * uploaded (already encrypted with the message's media key) and hands it to whoever has the path.
 */
export class MediaStore {
  readonly #blobs = new Map<string, Buffer>();

  /** Stores an encrypted blob; returns its direct path (what messages carry). */
  put(bytes: Buffer, kind = 'media'): string {
    const id = randomBytes(18).toString('base64url');
    const path = `/v/t62.${kind.replace(/[^a-z-]/g, '')}/${id}.enc`;
    this.#blobs.set(path, bytes);
    return path;
  }

  get(directPath: string): Buffer | undefined {
    return this.#blobs.get(directPath.split('?')[0]!);
  }

  get size(): number {
    return this.#blobs.size;
  }
}

/**
 * The HTTPS endpoint named in `media_conn`: `POST /mms/<type>/<hash>` stores an upload and answers
 * `{url, direct_path}`; `GET <direct_path>` serves it (with byte ranges); `GET /pps/...` serves
 * profile pictures from `pictures`.
 */
export class MediaServer {
  #server: Server | undefined;
  uploads = 0;
  downloads = 0;

  constructor(
    readonly store: MediaStore,
    private readonly cert: SelfSignedCert,
    private readonly pictures: (path: string) => Buffer | undefined,
  ) {}

  async listen(port: number, host = '127.0.0.1'): Promise<number> {
    const server = createServer({ cert: this.cert.cert, key: this.cert.key }, (req, res) => {
      this.#handle(req, res).catch(() => {
        if (!res.headersSent) res.writeHead(500);
        res.end();
      });
    });
    this.#server = server;
    return listenOn(server, port, host);
  }

  close(): Promise<void> {
    return closeServer(this.#server);
  }

  async #handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', 'https://media');
    if (req.method === 'POST') {
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of req as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_UPLOAD_BYTES) {
          res.writeHead(413).end();
          return;
        }
        chunks.push(chunk);
      }
      const kind = url.pathname.split('/')[2] ?? 'media';
      const directPath = this.store.put(Buffer.concat(chunks), kind);
      this.uploads++;
      const host = req.headers.host ?? '127.0.0.1';
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ url: `https://${host}${directPath}`, direct_path: directPath }));
      return;
    }
    if (req.method !== 'GET') {
      res.writeHead(405).end();
      return;
    }
    const body = url.pathname.startsWith('/pps/') ? this.pictures(url.pathname) : this.store.get(url.pathname);
    if (!body) {
      res.writeHead(404).end();
      return;
    }
    this.downloads++;
    const range = /^bytes=(\d*)-(\d*)$/.exec(req.headers.range ?? '');
    if (range && (range[1] || range[2])) {
      const start = range[1] ? Number(range[1]) : 0;
      const end = range[2] ? Math.min(Number(range[2]), body.length - 1) : body.length - 1;
      res.writeHead(206, {
        'content-range': `bytes ${start}-${end}/${body.length}`,
        'content-length': end - start + 1,
      });
      res.end(body.subarray(start, end + 1));
      return;
    }
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length });
    res.end(body);
  }
}
