/**
 * The baseline of bench/http.ts: bare Koa answering a small JSON object, in its own process like the
 * nodes. Prints `listening <port>` once it accepts connections.
 */
import Koa from 'koa';

const app = new Koa();
app.use((ctx) => {
  ctx.body = { success: true, message: 'ok', data: { status: 'healthy' } };
});
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`listening ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
