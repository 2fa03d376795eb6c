import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ApiRouter } from '../api-router.js';

/** Copied next to the compiled routes by `npm run build`, like the settings panel. */
const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'static');

/** The console's files: path → (file, content type). The page loads console.js, which imports the others. */
const FILES: ReadonlyArray<readonly [path: string, file: string, type: string]> = [
  ['/console', 'console.html', 'text/html; charset=utf-8'],
  ['/console/console.js', 'console.js', 'text/javascript; charset=utf-8'],
  ['/console/console-view.js', 'console-view.js', 'text/javascript; charset=utf-8'],
  ['/console/console-events.js', 'console-events.js', 'text/javascript; charset=utf-8'],
  ['/console/console.css', 'console.css', 'text/css; charset=utf-8'],
];

/**
 * Script and style come only from this origin's own files (no inline code, so no hashes to keep in step),
 * the QR code is a `data:` PNG from the connect endpoint, and `connect-src 'self'` covers the API and the
 * `/console/stream` WebSocket (CSP 3 matches ws/wss of the same host with 'self').
 */
export const CONSOLE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * GET /console: the operator console, static files read once at start. No auth here: the page asks for a
 * TokenAccount and calls the public API with it; live updates come from `/console/stream`
 * (http/ws/console-stream.ts).
 */
export function consoleRoutes() {
  const api = new ApiRouter({ tag: 'Pages' });
  for (const [path, file, type] of FILES) {
    const body = readFileSync(join(STATIC_DIR, file), 'utf8');
    const contentType = type.split(';')[0]!;
    const summary = file === 'console.html' ? 'The operator console (an HTML page)' : `The operator console's ${file}`;
    api.route(
      { method: 'get', path, summary, auth: 'public', responses: { 200: { description: file, contentType } } },
      (ctx) => {
        ctx.set('Content-Security-Policy', CONSOLE_CSP);
        ctx.set('X-Content-Type-Options', 'nosniff');
        ctx.set('Referrer-Policy', 'no-referrer');
        ctx.set('Cache-Control', 'no-store');
        ctx.type = type;
        ctx.body = body;
      },
    );
  }
  return api;
}
