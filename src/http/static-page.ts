import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { AppContext } from './app-state.js';

/** Copied next to the compiled code by `npm run build`, like the Lua scripts. */
const STATIC_DIR = join(dirname(fileURLToPath(import.meta.url)), 'static');

/** CSP hash source of each inline block, so a page needs no 'unsafe-inline'. */
function inlineHashes(html: string, tag: 'script' | 'style'): string {
  const blocks = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '');
  return blocks.map((b) => `'sha256-${createHash('sha256').update(b).digest('base64')}'`).join(' ');
}

/**
 * A self-contained page of `http/static/` (inline script and style only, nothing loaded from elsewhere),
 * read once; `send` answers with it under a CSP that allows exactly its inline blocks and same-origin calls.
 */
export function staticPage(fileName: string): { send(ctx: AppContext): void } {
  const html = readFileSync(join(STATIC_DIR, fileName), 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src ${inlineHashes(html, 'script')}`,
    `style-src ${inlineHashes(html, 'style')}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return {
    send(ctx) {
      ctx.set('Content-Security-Policy', csp);
      ctx.set('X-Content-Type-Options', 'nosniff');
      ctx.set('Referrer-Policy', 'no-referrer');
      ctx.set('Cache-Control', 'no-store');
      ctx.type = 'text/html; charset=utf-8';
      ctx.body = html;
    },
  };
}
