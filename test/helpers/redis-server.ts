import { spawn } from 'node:child_process';
import { readdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import type { ChildProcess } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { Redis } from 'ioredis';
import type { RedisOptions } from 'ioredis';

/** A throwaway `redis-server` on a free loopback port, with no persistence. */
export interface RedisServer {
  readonly port: number;
  /** `redis://127.0.0.1:<port>` */
  readonly url: string;
  /** SIGTERM, then waits for the exit (SIGKILL after 3 s). Idempotent. */
  stop(): Promise<void>;
  /** SIGKILL (a crash): resolves once the process is gone. */
  kill9(): Promise<void>;
  /**
   * Starts the server again on the same port (after stop() or kill9()): from its append-only file, or
   * empty (`{empty: true}` deletes the file first: a Redis that lost its data).
   */
  restart(options?: { empty?: boolean }): Promise<void>;
  /** SIGSTOP: the server keeps its connections open but answers nothing (a hung Redis). */
  pause(): void;
  /** SIGCONT after pause(). */
  resume(): void;
}

const START_TIMEOUT_MS = 10_000;

/** Every server still running, killed when the test process exits whatever happens. */
const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('no port'));
        return;
      }
      server.close(() => resolve(address.port));
    });
  });
}

/** One PING over a raw socket: true when the server answers +PONG. */
function ping(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(500, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('PING\r\n'));
    socket.on('data', (chunk) => {
      answer += chunk.toString('utf8');
      if (answer.includes('\r\n')) done(answer.startsWith('+PONG'));
    });
  });
}

function waitExit(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

export interface RedisServerOptions {
  /** A directory for an append-only file, so that a restart keeps the data (as production Redis does). */
  appendOnlyDir?: string;
  /** How often the append-only file is synced: `always`, or `everysec` (a crash loses up to a second). @default always */
  appendFsync?: 'always' | 'everysec';
  /** A Redis Cluster node keeping its `nodes.conf` in this directory (its bus on a free port of its own). */
  clusterDir?: string;
  /** A replica of the master on this port of 127.0.0.1. */
  replicaOf?: number;
  /** A sentinel started from this configuration file (written by the caller; sentinel rewrites it). */
  sentinelConfig?: string;
}

/** The arguments of one server; `busPort` is the cluster bus port, chosen with the server's port. */
function serverArgs(port: number, busPort: number, o: RedisServerOptions): string[] {
  const where = ['--port', String(port), '--bind', '127.0.0.1'];
  if (o.sentinelConfig) return [o.sentinelConfig, '--sentinel', ...where];
  const persistence = o.appendOnlyDir
    ? ['--appendonly', 'yes', '--appendfsync', o.appendFsync ?? 'always', '--dir', o.appendOnlyDir]
    : ['--appendonly', 'no'];
  const cluster = o.clusterDir
    ? // A failed master is replaced within seconds (the default waits 15 s before it calls a node failed).
      [
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        'nodes.conf',
        '--cluster-port',
        String(busPort),
        '--cluster-node-timeout',
        '2000',
      ]
    : [];
  const dir = o.clusterDir && !o.appendOnlyDir ? ['--dir', o.clusterDir] : [];
  const replica = o.replicaOf ? ['--replicaof', '127.0.0.1', String(o.replicaOf)] : [];
  return ['--save', '', ...persistence, ...cluster, ...dir, ...replica, ...where];
}

function spawnServer(args: string[]): ChildProcess {
  const child = spawn('redis-server', args, { stdio: 'ignore' });
  running.add(child);
  child.once('exit', () => running.delete(child));
  return child;
}

async function waitReady(child: ChildProcess, port: number): Promise<void> {
  let spawnError: NodeJS.ErrnoException | undefined;
  child.once('error', (err: NodeJS.ErrnoException) => (spawnError = err));
  const deadline = performance.now() + START_TIMEOUT_MS;
  for (;;) {
    if (spawnError?.code === 'ENOENT') {
      // The one prerequisite of the tests that npm cannot install (README, "Tests").
      throw new Error('redis-server is not installed: the tests need it on the PATH (apt-get install redis-server)');
    }
    if (spawnError) throw new Error(`redis-server could not start: ${spawnError.message}`);
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`redis-server on port ${port} exited early (${child.exitCode ?? child.signalCode})`);
    }
    if (await ping(port)) return;
    if (performance.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`redis-server on port ${port} did not answer PING within ${START_TIMEOUT_MS} ms`);
    }
    await new Promise((r) => setTimeout(r, 25));
  }
}

/** Starts `redis-server` (from PATH) on a free port of 127.0.0.1 and waits until it answers PING. */
export async function startRedisServer(o: RedisServerOptions = {}): Promise<RedisServer> {
  let port = 0;
  let args: string[] = [];
  let child: ChildProcess | undefined;
  // The free port can be taken between our probe and redis' bind: try a few.
  for (let attempt = 0; ; attempt++) {
    port = await freePort();
    args = serverArgs(port, o.clusterDir ? await freePort() : 0, o);
    child = spawnServer(args);
    try {
      await waitReady(child, port);
      break;
    } catch (err) {
      child.kill('SIGKILL');
      await waitExit(child);
      if (attempt >= 2) throw err;
    }
  }
  let current: ChildProcess = child;

  const stop = async () => {
    const proc = current;
    if (proc.exitCode !== null || proc.signalCode !== null) return;
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), 3000);
    await waitExit(proc);
    clearTimeout(timer);
  };

  return {
    port,
    url: `redis://127.0.0.1:${port}`,
    stop,
    async kill9() {
      const proc = current;
      proc.kill('SIGKILL');
      await waitExit(proc);
    },
    async restart(options = {}) {
      await stop();
      if (options.empty && o.appendOnlyDir) {
        for (const name of readdirSync(o.appendOnlyDir)) {
          if (name.startsWith('appendonly')) rmSync(join(o.appendOnlyDir, name), { recursive: true, force: true });
        }
      }
      current = spawnServer(args);
      await waitReady(current, port);
    },
    pause() {
      current.kill('SIGSTOP');
    },
    resume() {
      current.kill('SIGCONT');
    },
  };
}

/**
 * An ioredis client configured like the service's (src/cluster/cluster-runtime.ts): no offline queue, one
 * retry per request, connected before it is returned. Errors are swallowed (servers get killed on purpose).
 */
export async function connectRedis(url: string, options: RedisOptions = {}): Promise<Redis> {
  const client = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false, lazyConnect: true, ...options });
  client.on('error', () => undefined);
  await client.connect();
  return client;
}
