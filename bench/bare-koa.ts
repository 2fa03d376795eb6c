/**
 * The baseline of bench/http.ts: bare Koa answering a small JSON object, in its own process like the
 * nodes. Prints `listening <port>` once it accepts connections.
 *
 * `GET /shaped` answers what a Switchboard read answers besides its work: the body given in SHAPED_BODY
 * (JSON) and the headers every API response carries (the three X-RateLimit-*, X-Request-Id, Vary:
 * Origin), so that the bench can tell what the response's shape costs Koa from what the node's code does.
 */
import { randomUUID } from 'node:crypto';
import Koa from 'koa';

const shaped: unknown = JSON.parse(process.env.SHAPED_BODY ?? '{}');

const app = new Koa();
app.use((ctx) => {
  if (ctx.path !== '/shaped') {
    ctx.body = { success: true, message: 'ok', data: { status: 'healthy' } };
    return;
  }
  ctx.set('X-Request-Id', randomUUID());
  ctx.set('X-RateLimit-Limit', '1000000');
  ctx.set('X-RateLimit-Remaining', '999999');
  ctx.set('X-RateLimit-Reset', String(Math.ceil(Date.now() / 1000) + 60));
  ctx.vary('Origin');
  ctx.body = shaped;
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`listening ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
