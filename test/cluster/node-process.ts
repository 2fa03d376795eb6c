import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { ApiClient } from '../helpers/test-node.js';

export const CLUSTER_ENCRYPTION_KEY = 'c'.repeat(64);
export const CLUSTER_ADMIN_TOKEN = 'cluster-admin-token-0123456789';

export interface NodeProcessOptions {
  nodeId: string;
  /** Unset: an embedded node (in-process leases and transport). */
  redisUrl?: string;
  dataDir: string;
  probeFile?: string;
  env?: Record<string, string>;
  /** The node's entry: the TypeScript sources (through tsx) unless a built `main.js` is named. */
  builtMain?: string;
  /** Node's own flags before the entry (a bench's `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeFlags?: string[];
}

/**
 * One Switchboard node as a separate OS process (so that `kill -9`, SIGSTOP and SIGTERM are real),
 * started from the TypeScript sources (or from a build, for the benches).
 */
export class NodeProcess {
  readonly api: ApiClient;
  output = '';
  readonly exited: Promise<number | null>;

  private constructor(
    readonly nodeId: string,
    readonly url: string,
    private readonly child: ChildProcess,
    exited: Promise<number | null>,
    output: string,
  ) {
    this.api = new ApiClient(url);
    this.exited = exited;
    this.output = output;
    child.stdout?.on('data', (c: Buffer) => (this.output += c.toString()));
    child.stderr?.on('data', (c: Buffer) => (this.output += c.toString()));
    // A node that dies on its own is a bug: its last words go to the test's output.
    void exited.then((code) => {
      if (!this.#stopping) {
        process.stderr.write(
          `\nnode ${nodeId} exited on its own (${code}); its last output:\n${this.output.slice(-4000)}\n`,
        );
      }
    });
  }

  #stopping = false;

  static start(o: NodeProcessOptions): Promise<NodeProcess> {
    const { REDIS_URL: _r, REDIS_MODE: _rm, REDIS_SENTINEL_MASTER: _rs, MONGO_URL: _m, ...inherited } = process.env;
    const args = [...(o.nodeFlags ?? []), ...(o.builtMain ? [o.builtMain] : ['--import', 'tsx', 'src/main.ts'])];
    const child = spawn(process.execPath, args, {
      env: {
        ...inherited,
        ...(o.redisUrl ? { REDIS_URL: o.redisUrl } : {}),
        DATA_DIR: o.dataDir,
        ENCRYPTION_KEY: CLUSTER_ENCRYPTION_KEY,
        ADMIN_TOKEN: CLUSTER_ADMIN_TOKEN,
        NODE_ID: o.nodeId,
        HOST: '127.0.0.1',
        PORT: '0',
        LOG_LEVEL: 'info',
        MSGNET_DRIVER: 'sandbox',
        ...(o.probeFile ? { TEST_PROBE_FILE: o.probeFile } : {}),
        ...o.env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const exited = new Promise<number | null>((resolve) =>
      child.once('exit', (code, signal) => resolve(code ?? (signal ? -1 : null))),
    );
    let output = '';
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`node ${o.nodeId} did not start:\n${output}`));
        // Compiling the sources on start takes seconds on a loaded machine.
      }, 45_000);
      const onData = (chunk: Buffer) => {
        output += chunk.toString();
        const m = /"url":"(http:\/\/[^"]+)"[^\n]*"msg":"node listening"/.exec(output);
        if (m?.[1]) {
          clearTimeout(timer);
          child.stdout?.off('data', onData);
          child.stderr?.off('data', onData);
          resolve(new NodeProcess(o.nodeId, m[1], child, exited, output));
        }
      };
      child.stdout?.on('data', onData);
      child.stderr?.on('data', onData);
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`node ${o.nodeId} exited with ${code} before listening:\n${output}`));
      });
    });
  }

  get pid(): number {
    return this.child.pid!;
  }

  kill9(): Promise<number | null> {
    this.#stopping = true;
    this.child.kill('SIGKILL');
    return this.exited;
  }

  pause(): void {
    this.child.kill('SIGSTOP');
  }

  resume(): void {
    this.child.kill('SIGCONT');
  }

  /** Graceful stop (SIGTERM); resolves with the exit code. */
  async terminate(): Promise<number | null> {
    this.#stopping = true;
    this.child.kill('SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), 30_000);
    const code = await this.exited;
    clearTimeout(timer);
    return code;
  }
}
