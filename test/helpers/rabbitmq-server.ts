import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'amqplib';
import { startChildServer } from './child-server.js';
import type { ChildServer } from './child-server.js';
import { freePort } from './redis-server.js';

/** Debian's launcher; run as root it switches to the `rabbitmq` user (and its HOME), so root runs the server script itself. */
const WRAPPER = '/usr/sbin/rabbitmq-server';
const SERVER_SCRIPT = '/usr/lib/rabbitmq/bin/rabbitmq-server';

/** Why the RabbitMQ tests cannot run here, or undefined when they can. */
export function rabbitMqMissing(): string | undefined {
  return existsSync(WRAPPER) ? undefined : `${WRAPPER} is not installed (Debian package rabbitmq-server)`;
}

/**
 * A throwaway RabbitMQ node of its own (name, ports, data and logs in a temporary directory); stop() keeps
 * its durable exchanges, queues and persistent messages.
 */
export type RabbitMqServer = ChildServer;

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
  return startChildServer({
    name: 'rabbitmq-server',
    url,
    dir,
    command: () => (process.getuid?.() === 0 && existsSync(SERVER_SCRIPT) ? SERVER_SCRIPT : WRAPPER),
    args: [],
    options: { env, cwd: dir },
    ready: async () => {
      const connection = await connect(url);
      await connection.close();
    },
    // The Erlang VM starts slowly on a busy machine, and flushes its queues slowly on stop.
    startTimeoutMs: 120_000,
    pollMs: 500,
    stopGraceMs: 30_000,
  });
}
