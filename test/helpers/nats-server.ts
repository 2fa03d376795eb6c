import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'nats';
import { freePort } from './redis-server.js';

const BINARY = '/usr/sbin/nats-server';
const START_TIMEOUT_MS = 20_000;

/** Why the NATS tests cannot run here, or undefined when they can. */
export function natsMissing(): string | undefined {
  return existsSync(BINARY) ? undefined : `${BINARY} is not installed (Debian package nats-server)`;
}

/** A throwaway `nats-server -js` on a free loopback port, its JetStream store in a temporary directory. */
export interface NatsServer {
  readonly url: string;
  /** Stops it (SIGTERM), keeping the store. */
  stop(): Promise<void>;
  /** Starts it again on the same port and store. */
  start(): Promise<void>;
  destroy(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startNatsServer(): Promise<NatsServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-nats-'));
  const port = await freePort();
  const url = `nats://127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    const proc = spawn(BINARY, ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', dir], { stdio: 'ignore' });
    running.add(proc);
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      running.delete(proc);
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (exited) throw new Error('nats-server exited while starting');
      try {
        const nc = await connect({ servers: url, timeout: 1000 });
        await nc.jetstreamManager();
        await nc.close();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`nats-server did not answer within ${START_TIMEOUT_MS} ms`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
