import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import pino from 'pino';
import { startSimulator } from './simulator.js';

/** `npm run simulator -- [--port P] [--http-port Q] [--media-port M] [--logins-per-second N] [--verbose]` */
const { values } = parseArgs({
  options: {
    port: { type: 'string', default: '0' },
    'http-port': { type: 'string', default: '0' },
    'media-port': { type: 'string', default: '0' },
    host: { type: 'string', default: '127.0.0.1' },
    'logins-per-second': { type: 'string', default: '0' },
    'write-env': { type: 'string' },
    verbose: { type: 'boolean', default: false },
  },
});
const port = (v: string | undefined, name: string): number => {
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) {
    console.error(`--${name} must be a port number (0 = any free port)`);
    process.exit(64);
  }
  return n;
};
const sim = await startSimulator({
  port: port(values.port, 'port'),
  httpPort: port(values['http-port'], 'http-port'),
  mediaPort: port(values['media-port'], 'media-port'),
  host: values.host,
  loginsPerSecond: Number(values['logins-per-second'] ?? 0) || 0,
  logger: pino({ level: values.verbose ? 'debug' : 'warn' }),
});
console.log(`WhatsApp simulator`);
console.log(`  websocket:   ${sim.wsUrl}`);
console.log(`  control API: ${sim.httpUrl}`);
console.log(`  media:       ${sim.mediaUrl}`);
const envFile = values['write-env'];
if (envFile) {
  // Shell syntax: `set -a; . ./<file>; set +a` before starting a node gives it these variables.
  const lines = Object.entries(sim.nodeEnv).map(([k, v]: [string, string]) => `${k}='${v.replace(/'/g, "'\\''")}'`);
  writeFileSync(envFile, `${lines.join('\n')}\n`, { mode: 0o600 });
  console.log(`  node env:    ${envFile} (set -a; . ${envFile}; set +a; npm start)`);
} else {
  console.log(`  node env:    ${sim.httpUrl}/node-env`);
}
const stop = (): void => {
  void sim.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
