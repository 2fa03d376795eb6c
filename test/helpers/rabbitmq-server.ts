import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { freePort } from './redis-server.js';

/** Debian's launcher; run as root it switches to the `rabbitmq` user (and its HOME), so root runs the server script itself. */
const WRAPPER = '/usr/sbin/rabbitmq-server';
const SERVER_SCRIPT = '/usr/lib/rabbitmq/bin/rabbitmq-server';
/** The Erlang VM starts slowly on a busy machine. */
const START_TIMEOUT_MS = 120_000;

/** Why the RabbitMQ tests cannot run here, or undefined when they can. */
export function rabbitMqMissing(): string | undefined {
  return existsSync(WRAPPER) ? undefined : `${WRAPPER} is not installed (Debian package rabbitmq-server)`;
}

/** A throwaway RabbitMQ node of its own (name, ports, data and logs in a temporary directory). */
export interface RabbitMqServer {
  readonly url: string;
  /** Stops the node (SIGTERM), keeping its data: durable exchanges, queues and persistent messages. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  destroy(): Promise<void>;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function startRabbitMq(): Promise<RabbitMqServer> {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-rabbitmq-'));
  const port = await freePort();
  const distPort = await freePort();
  writeFileSync(join(dir, 'enabled_plugins'), '[].\n');
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    HOME: dir,
    RABBITMQ_NODE_IP_ADDRESS: '127.0.0.1',
    RABBITMQ_NODE_PORT: String(port),
    RABBITMQ_DIST_PORT: String(distPort),
    RABBITMQ_NODENAME: `switchboard-test-${port}@localhost`,
    RABBITMQ_MNESIA_BASE: join(dir, 'mnesia'),
    RABBITMQ_LOG_BASE: join(dir, 'log'),
    RABBITMQ_LOGS: join(dir, 'log', 'rabbit.log'),
    RABBITMQ_ENABLED_PLUGINS_FILE: join(dir, 'enabled_plugins'),
    RABBITMQ_FEATURE_FLAGS_FILE: join(dir, 'feature_flags'),
    RABBITMQ_CONFIG_FILE: join(dir, 'rabbitmq'),
    RABBITMQ_PID_FILE: join(dir, 'pid'),
  };
  const url = `amqp://guest:guest@127.0.0.1:${port}`;
  let child: ChildProcess | undefined;

  const start = async () => {
    const asRoot = process.getuid?.() === 0 && existsSync(SERVER_SCRIPT);
    const proc = spawn(asRoot ? SERVER_SCRIPT : WRAPPER, [], { env, cwd: dir, stdio: 'ignore' });
    running.add(proc);
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      running.delete(proc);
    });
    const deadline = Date.now() + START_TIMEOUT_MS;
    for (;;) {
      if (exited) throw new Error(`rabbitmq-server exited while starting (logs in ${dir}/log)`);
      try {
        const connection = await connect(url);
        await connection.close();
        return;
      } catch {
        if (Date.now() > deadline) {
          throw new Error(`rabbitmq-server did not accept connections within ${START_TIMEOUT_MS} ms`);
        }
        await new Promise((r) => setTimeout(r, 500));
      }
    }
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 30_000);
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
