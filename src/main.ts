import { ConfigError, loadConfig } from './config/config.js';
import { startNode } from './node.js';

let config;
try {
  config = loadConfig();
} catch (err) {
  if (err instanceof ConfigError) {
    process.stderr.write(`switchboard: configuration error: ${err.message}\n`);
    process.exit(78);
  }
  throw err;
}

const node = await startNode(config);
let stopping = false;
for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  process.on(signal, () => {
    if (stopping) return;
    stopping = true;
    node.logger.info({ signal }, 'shutting down');
    node.close().then(
      () => process.exit(0),
      (err: unknown) => {
        node.logger.error({ err }, 'shutdown failed');
        process.exit(1);
      },
    );
  });
}
