import { ConfigError, loadConfig } from './config/config.js';
import { StartupError } from './errors.js';
import { startNode } from './node.js';
import type { RunningNode } from './node.js';

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

// Handlers first: a signal during start-up must still end in a graceful stop, not the default kill.
let stopSignal: NodeJS.Signals | undefined;
const started: { node?: RunningNode } = {};
function stop(signal: NodeJS.Signals): void {
  if (stopSignal !== undefined) return;
  stopSignal = signal;
  if (started.node) shutDown(started.node, signal);
}
for (const signal of ['SIGTERM', 'SIGINT'] as const) process.on(signal, () => stop(signal));

function shutDown(running: RunningNode, signal: NodeJS.Signals): void {
  running.logger.info({ signal }, 'shutting down');
  running.close().then(
    () => process.exit(0),
    (err: unknown) => {
      running.logger.error({ err }, 'shutdown failed');
      process.exit(1);
    },
  );
}

try {
  started.node = await startNode(config);
} catch (err) {
  if (!(err instanceof StartupError)) throw err;
  process.stderr.write(`switchboard: cannot start: ${err.message}\n`);
  process.exit(err.exitCode);
}
if (stopSignal !== undefined) shutDown(started.node, stopSignal);
