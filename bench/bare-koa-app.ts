import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';

/** The headers every API response of the node carries (the three X-RateLimit-*, X-Request-Id, Vary: Origin). */
function apiHeaders(ctx: Context): void {
  ctx.set('X-Request-Id', randomUUID());
  ctx.set('X-RateLimit-Limit', '1000000');
  ctx.set('X-RateLimit-Remaining', '999999');
  ctx.set('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 60));
  ctx.vary('Origin');
}

/**
 * The baselines of the front-end benches, as a Koa application:
 * - any path but those below: a small JSON object, bare Koa;
 * - `GET /shaped`: `shaped` (getSettings' answer) with the headers of an API response, what the
 *   response's shape costs Koa apart from what the node's code does;
 * - `GET /api/instance/getSettings/:instance`: the same through `@koa/router`;
 * - `POST /api/cluster/probe/:instance`: through `@koa/router` and koa-body (a JSON body, as the node reads
 *   it), answering `described` (describe's answer).
 * The last two are the node's own paths, so that a bench can send the node's very requests; what is left
 * between them and the node is the node's own code.
 */
export function bareKoaApp(shaped: unknown, described: unknown): Koa {
  const settings = new Router({ prefix: '/api/instance' });
  settings.get('/getSettings/:instance', (ctx) => {
    apiHeaders(ctx);
    ctx.body = shaped;
  });
  const probe = new Router({ prefix: '/api/cluster' });
  probe.post(
    '/probe/:instance',
    koaBody({ json: true, jsonStrict: true, multipart: false, urlencoded: false, text: false }),
    (ctx) => {
      apiHeaders(ctx);
      ctx.body = described;
    },
  );
  const app = new Koa();
  app.use((ctx: Context, next: Next) => {
    if (ctx.path.startsWith('/api/')) return next();
    if (ctx.path === '/shaped') {
      apiHeaders(ctx);
      ctx.body = shaped;
      return;
    }
    ctx.body = { success: true, message: 'ok', data: { status: 'healthy' } };
  });
  app.use(settings.routes());
  app.use(probe.routes());
  return app;
}
