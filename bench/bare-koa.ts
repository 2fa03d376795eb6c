/**
 * The baseline of bench/http.ts: bare Koa answering a small JSON object, in its own process like the
 * nodes. Prints `listening <port>` once it accepts connections.
 *
 * `GET /shaped` answers what a Switchboard read answers besides its work: the body given in SHAPED_BODY
 * (JSON) and the headers every API response carries (the three X-RateLimit-*, X-Request-Id, Vary:
 * Origin), so that the bench can tell what the response's shape costs Koa from what the node's code does.
 *
 * Under `/stack` the same answers go through the libraries the node's routes use, and nothing else:
 * `GET /stack/getSettings/:instance` through `@koa/router`, `POST /stack/probe/:instance` through
 * `@koa/router` and koa-body (a JSON body, as the node reads it), answering DESCRIBE_BODY. What is left
 * between those rows and the node's is the node's own code.
 */
import { randomUUID } from 'node:crypto';
import Router from '@koa/router';
import Koa from 'koa';
import type { Context, Next } from 'koa';
import { koaBody } from 'koa-body';

const shaped: unknown = JSON.parse(process.env.SHAPED_BODY ?? '{}');
const described: unknown = JSON.parse(process.env.DESCRIBE_BODY ?? '{}');

/** The headers every API response carries. */
function apiHeaders(ctx: Context): void {
  ctx.set('X-Request-Id', randomUUID());
  ctx.set('X-RateLimit-Limit', '1000000');
  ctx.set('X-RateLimit-Remaining', '999999');
  ctx.set('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 60));
  ctx.vary('Origin');
}

const stack = new Router({ prefix: '/stack' });
stack.get('/getSettings/:instance', (ctx) => {
  apiHeaders(ctx);
  ctx.body = shaped;
});
stack.post(
  '/probe/:instance',
  koaBody({ json: true, jsonStrict: true, multipart: false, urlencoded: false, text: false }),
  (ctx) => {
    apiHeaders(ctx);
    ctx.body = described;
  },
);

const app = new Koa();
app.use((ctx: Context, next: Next) => {
  if (ctx.path.startsWith('/stack/')) return next();
  if (ctx.path === '/shaped') {
    apiHeaders(ctx);
    ctx.body = shaped;
    return;
  }
  ctx.body = { success: true, message: 'ok', data: { status: 'healthy' } };
});
app.use(stack.routes());
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`listening ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
