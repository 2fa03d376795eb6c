import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { pino } from 'pino';
import type { Logger } from 'pino';
import { AccountService } from './accounts/account-service.js';
import { MemoryRateLimiter } from './cluster/rate-limiter.js';
import type { Config } from './config/config.js';
import { createApp } from './http/app.js';
import { isLoopbackHost } from './http/https-only.js';
import { InstanceService } from './instances/instance-service.js';
import { resolveEncryptionKey } from './security/encryption-key.js';
import { SecretBox } from './security/secret-box.js';
import { openStore } from './store/open-store.js';
import type { Store } from './store/store.js';

export interface RunningNode {
  nodeId: string;
  /** Where the node listens, e.g. http://127.0.0.1:8080 */
  url: string;
  store: Store;
  logger: Logger;
  close(): Promise<void>;
}

/** Wires one Switchboard node from its configuration and starts listening. */
export async function startNode(config: Config, options: { logger?: Logger } = {}): Promise<RunningNode> {
  const nodeId = config.nodeId ?? `node-${randomUUID().slice(0, 8)}`;
  const logger = (options.logger ?? pino({ level: config.logLevel })).child({ node: nodeId });
  const mode = config.embedded ? 'embedded' : 'cluster';

  const key = resolveEncryptionKey(config);
  if (key.source === 'file-created') logger.warn('no ENCRYPTION_KEY: created a key file in DATA_DIR (keep it safe and back it up)');
  const secrets = new SecretBox(key.key);
  const store = await openStore(config);
  const rateLimiter = new MemoryRateLimiter();
  const accounts = new AccountService(store, config.defaultInstanceQuota);
  const instances = new InstanceService({ store, secrets, allowPrivateUrls: config.allowPrivateUrls, logger });

  if (config.embedded) {
    const token = await accounts.ensureFirstAccount();
    // Printed once, on the first start only: the token cannot be recovered later.
    if (token) logger.info({ account: 'default', token }, 'created account "default"; its TokenAccount is shown only now');
  }

  const app = createApp({
    nodeId,
    mode,
    logger,
    store,
    rateLimiter,
    accounts,
    instances,
    adminToken: config.adminToken,
    trustProxy: config.trustProxy,
    requireHttps: !(config.tls || config.allowInsecureHttp || isLoopbackHost(config.host)),
    maxBodyBytes: config.maxBodyBytes,
    rateLimitPerMinute: config.rateLimitPerMinute,
    rateLimitCreatePerMinute: config.rateLimitCreatePerMinute,
    healthChecks: [{ name: 'store', check: () => store.ping() }],
  });
  app.on('error', (err: unknown) => logger.debug({ err }, 'koa error'));

  const server: Server = config.tls
    ? createHttpsServer({ cert: readFileSync(config.tls.certFile), key: readFileSync(config.tls.keyFile) }, app.callback())
    : createHttpServer(app.callback());
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(config.port, config.host, () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  const host = config.host.includes(':') ? `[${config.host}]` : config.host;
  const url = `${config.tls ? 'https' : 'http'}://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}`;
  logger.info({ url, mode, store: store.kind }, 'node listening');

  let closing: Promise<void> | undefined;
  return {
    nodeId,
    url,
    store,
    logger,
    close() {
      closing ??= (async () => {
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
        });
        await rateLimiter.close();
        await store.close();
        logger.info('node stopped');
      })();
      return closing;
    },
  };
}
