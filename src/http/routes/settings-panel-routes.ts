import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import Router from '@koa/router';
import type { AppState } from '../app-state.js';

/** Copied next to the compiled routes by `npm run build`, like the Lua scripts. */
const PAGE_FILE = join(dirname(fileURLToPath(import.meta.url)), '..', 'static', 'settings.html');

/** CSP hash source of each inline block, so the page needs no 'unsafe-inline'. */
function inlineHashes(html: string, tag: 'script' | 'style'): string {
  const blocks = [...html.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((m) => m[1] ?? '');
  return blocks.map((b) => `'sha256-${createHash('sha256').update(b).digest('base64')}'`).join(' ');
}

/**
 * GET /settings: the account-webhook settings panel of spec 4.9, one static page (read once at start)
 * that calls /api/account/webhook* with the TokenAccount typed in; no auth here, the API checks it.
 */
export function settingsPanelRoutes() {
  const html = readFileSync(PAGE_FILE, 'utf8');
  const csp = [
    "default-src 'none'",
    `script-src ${inlineHashes(html, 'script')}`,
    `style-src ${inlineHashes(html, 'style')}`,
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  const router = new Router<AppState>();
  router.get('/settings', (ctx) => {
    ctx.set('Content-Security-Policy', csp);
    ctx.set('X-Content-Type-Options', 'nosniff');
    ctx.set('Referrer-Policy', 'no-referrer');
    ctx.set('Cache-Control', 'no-store');
    ctx.type = 'text/html; charset=utf-8';
    ctx.body = html;
  });
  return router;
}
