import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { startChildServer } from './child-server.js';
import type { ChildServer } from './child-server.js';
import { freePort } from './redis-server.js';

const BINARY = '/usr/sbin/nats-server';

/** Why the NATS tests cannot run here, or undefined when they can. */
export function natsMissing(): string | undefined {
  return existsSync(BINARY) ? undefined : `${BINARY} is not installed (Debian package nats-server)`;
}

/** A throwaway `nats-server -js` on a free loopback port, its JetStream store in a temporary directory. */
export type NatsServer = ChildServer;

export async function startNatsServer(): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-nats-'));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  return startChildServer({
    name: 'nats-server',
    url,
    dir,
    command: () => BINARY,
    args: ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir],
    // JetStream answers only once its store is open, after the port.
    ready: async () => {
      const nc = await connect({ servers: url, timeout: 1000 });
      try {
        await nc.jetstreamManager();
      } finally {
        await nc.close();
      }
    },
    startTimeoutMs: 20_000,
    pollMs: 100,
    stopGraceMs: 10_000,
  });
}
