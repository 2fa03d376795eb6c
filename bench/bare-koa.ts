/**
 * The baseline of bench/http.ts: `bareKoaApp` (bench/bare-koa-app.ts) in its own process like the nodes,
 * answering SHAPED_BODY and DESCRIBE_BODY (JSON). Prints `listening <port>` once it accepts connections.
 */
import { bareKoaApp } from './bare-koa-app.js';

const app = bareKoaApp(JSON.parse(process.env.SHAPED_BODY ?? '{}'), JSON.parse(process.env.DESCRIBE_BODY ?? '{}'));
const server = app.listen(0, '127.0.0.1', () => {
  const address = server.address();
  if (address && typeof address === 'object') process.stdout.write(`listening ${address.port}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));
