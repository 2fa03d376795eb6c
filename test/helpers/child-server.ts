import { spawn } from 'node:child_process';
import type { ChildProcess, SpawnOptions } from 'node:child_process';
import { rmSync } from 'node:fs';

/** A broker the tests run as a child process of their own, its data in a temporary directory. */
export interface ChildServer {
  readonly url: string;
  /** Stops it (SIGTERM, SIGKILL after the grace), keeping its data. */
  stop(): Promise<void>;
  /** Starts it again on the same port and data. */
  start(): Promise<void>;
  /** Stops it and deletes its directory. */
  destroy(): Promise<void>;
}

export interface ChildServerSpec {
  /** What the logs and errors call it (`nats-server`). */
  name: string;
  url: string;
  /** The directory holding its data; deleted by destroy(). */
  dir: string;
  command: () => string;
  args: string[];
  options?: SpawnOptions;
  /** Resolves once the server serves (connect, ask, close); throws while it does not yet. */
  ready: () => Promise<void>;
  startTimeoutMs: number;
  /** Between two readiness checks. */
  pollMs: number;
  /** How long a SIGTERM may take before SIGKILL. */
  stopGraceMs: number;
}

const running = new Set<ChildProcess>();
process.once('exit', () => {
  for (const child of running) child.kill('SIGKILL');
});

/** Spawns the server, waits until `ready` passes, and gives stop/start/destroy over the same port and data. */
export async function startChildServer(spec: ChildServerSpec): Promise<ChildServer> {
  let child: ChildProcess | undefined;

  const start = async () => {
    const proc = spawn(spec.command(), spec.args, { stdio: 'ignore', ...spec.options });
    running.add(proc);
    child = proc;
    let exited = false;
    proc.once('exit', () => {
      exited = true;
      running.delete(proc);
    });
    const deadline = Date.now() + spec.startTimeoutMs;
    for (;;) {
      if (exited) throw new Error(`${spec.name} exited while starting (its data in ${spec.dir})`);
      try {
        await spec.ready();
        return;
      } catch {
        if (Date.now() > deadline) throw new Error(`${spec.name} did not answer within ${spec.startTimeoutMs} ms`);
        await new Promise((r) => setTimeout(r, spec.pollMs));
      }
    }
  };

  const stop = async () => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null) return;
    const exited = new Promise<void>((resolve) => proc.once('exit', () => resolve()));
    proc.kill('SIGTERM');
    const timer = setTimeout(() => proc.kill('SIGKILL'), spec.stopGraceMs);
    await exited;
    clearTimeout(timer);
  };

  await start();
  return {
    url: spec.url,
    start,
    stop,
    async destroy() {
      await stop();
      rmSync(spec.dir, { recursive: true, force: true });
    },
  };
}
