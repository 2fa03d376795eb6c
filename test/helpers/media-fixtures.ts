import { resolveMediaTools } from '../../src/media/media-tools.js';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { crc32, deflateSync } from 'node:zlib';
import sharp from 'sharp';

/** Media made on the fly for tests (nothing downloaded, nothing checked in). */

export async function pngImage(width: number, height: number, background = '#336699'): Promise<Buffer> {
  return sharp({ create: { width, height, channels: 3, background } })
    .png()
    .toBuffer();
}

function pngChunk(type: string, data: Buffer): Buffer {
  const length = Buffer.alloc(4);
  length.writeUInt32BE(data.length);
  const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(body) >>> 0);
  return Buffer.concat([length, body, crc]);
}

/** A well-formed 1-bit grayscale PNG whose IDAT is `idat`. */
function rawPng(width: number, height: number, idat: Buffer): Buffer {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(width, 0);
  ihdr.writeUInt32BE(height, 4);
  ihdr[8] = 1;
  ihdr[9] = 0;
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', idat),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** A decompression bomb: about 110 KB on disk, 30000x30000 pixels (900 MP) once decoded. */
export function pixelBombPng(): Buffer {
  const side = 30_000;
  return rawPng(side, side, deflateSync(Buffer.alloc((side / 8 + 1) * side), { level: 9 }));
}

/** A PNG with a valid header and undecodable pixel data. */
export function corruptPng(): Buffer {
  return rawPng(64, 64, Buffer.from('this is not zlib data at all'));
}

/** A two-frame animated GIF: red, then blue. */
export async function animatedGif(): Promise<Buffer> {
  const frame = (background: string) =>
    sharp({ create: { width: 40, height: 30, channels: 3, background } })
      .png()
      .toBuffer();
  return sharp([await frame('#ff0000'), await frame('#0000ff')], { join: { animated: true } })
    .gif()
    .toBuffer();
}

/** 16-bit mono PCM WAV: a 440 Hz tone whose loudness falls from full to a quarter halfway through. */
export function wavTone(seconds: number, rate = 8000): Buffer {
  const samples = Math.round(seconds * rate);
  const data = Buffer.alloc(samples * 2);
  for (let i = 0; i < samples; i++) {
    const gain = i < samples / 2 ? 0.9 : 0.225;
    data.writeInt16LE(Math.round(gain * 32767 * Math.sin((2 * Math.PI * 440 * i) / rate)), i * 2);
  }
  const header = Buffer.alloc(44);
  header.write('RIFF', 0, 'latin1');
  header.writeUInt32LE(36 + data.length, 4);
  header.write('WAVEfmt ', 8, 'latin1');
  header.writeUInt32LE(16, 16);
  header.writeUInt16LE(1, 20);
  header.writeUInt16LE(1, 22);
  header.writeUInt32LE(rate, 24);
  header.writeUInt32LE(rate * 2, 28);
  header.writeUInt16LE(2, 32);
  header.writeUInt16LE(16, 34);
  header.write('data', 36, 'latin1');
  header.writeUInt32LE(data.length, 40);
  return Buffer.concat([header, data]);
}

const run = promisify(execFile);

/** A small test-pattern video made by ffmpeg: `mp4` (H.264) or `webm` (VP8). */
export async function video(seconds: number, format: 'mp4' | 'webm' = 'mp4'): Promise<Buffer> {
  const dir = await mkdtemp(join(tmpdir(), 'switchboard-fixture-'));
  try {
    const out = join(dir, `clip.${format}`);
    const codec =
      format === 'mp4'
        ? ['-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p']
        : ['-c:v', 'libvpx', '-deadline', 'realtime'];
    await run((await resolveMediaTools()).ffmpeg.command, [
      '-v',
      'error',
      '-f',
      'lavfi',
      '-i',
      `testsrc=size=64x64:rate=2:duration=${seconds}`,
      ...codec,
      out,
    ]);
    return await readFile(out);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

export type Handler = (req: IncomingMessage, res: ServerResponse) => void;

/** An HTTP server on 127.0.0.1 for URL tests: named routes, a hit count per path. */
export interface FileServer {
  port: number;
  url(path: string): string;
  hits: Map<string, number>;
  /** Request headers seen, by path. */
  headers: Map<string, IncomingMessage['headers']>;
  route(path: string, handler: Handler): void;
  serve(path: string, body: Buffer, contentType?: string): void;
  close(): Promise<void>;
}

export async function startFileServer(): Promise<FileServer> {
  const routes = new Map<string, Handler>();
  const hits = new Map<string, number>();
  const headers = new Map<string, IncomingMessage['headers']>();
  const server = createServer((req, res) => {
    const path = (req.url ?? '/').split('?')[0]!;
    hits.set(path, (hits.get(path) ?? 0) + 1);
    headers.set(path, req.headers);
    const handler = routes.get(path);
    if (handler) handler(req, res);
    else res.writeHead(404).end('not found');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    port,
    url: (path) => `http://127.0.0.1:${port}${path}`,
    hits,
    headers,
    route: (path, handler) => routes.set(path, handler),
    serve: (path, body, contentType = 'application/octet-stream') =>
      routes.set(path, (_req, res) =>
        res.writeHead(200, { 'content-type': contentType, 'content-length': body.length }).end(body),
      ),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** Streams `total` bytes without a Content-Length; returns how many were written before the client left. */
export function streamBytes(total: number, written: { bytes: number }): Handler {
  return (_req, res) => {
    res.writeHead(200, { 'content-type': 'image/png' });
    const chunk = Buffer.alloc(64 * 1024);
    const pump = () => {
      while (written.bytes < total) {
        written.bytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', pump);
          return;
        }
      }
      res.end();
    };
    res.on('close', () => res.removeAllListeners('drain'));
    pump();
  };
}
