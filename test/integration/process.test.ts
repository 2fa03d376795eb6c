import { spawn, spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createServer } from 'node:net';
import { expect } from 'chai';

const TSX = ['--import', 'tsx'];

/** A loopback port nothing listens on (taken, then released). */
async function closedPort(): Promise<number> {
  const server = createServer().listen(0, '127.0.0.1');
  await new Promise((r) => server.once('listening', r));
  const { port } = server.address() as { port: number };
  await new Promise((r) => server.close(r));
  return port;
}

function env(extra: Record<string, string>): NodeJS.ProcessEnv {
  const { REDIS_URL: _r, MONGO_URL: _m, ENCRYPTION_KEY: _e, ...rest } = process.env;
  return { ...rest, LOG_LEVEL: 'info', MSGNET_DRIVER: 'sandbox', ...extra };
}

/** Starts src/main.ts as a real process and resolves with its output once it listens. */
function startMain(dataDir: string): Promise<{ output: string; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [...TSX, 'src/main.ts'], {
    env: env({ DATA_DIR: dataDir, PORT: '0' }),
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  return new Promise((resolve, reject) => {
    // A node that does not listen in time must not outlive the test; compiling on start is slow on a busy machine.
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`node did not start: ${output}`));
    }, 45_000);
    child.stdout.on('data', (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes('node listening')) {
        clearTimeout(timer);
        resolve({
          output,
          stop: () =>
            new Promise((done) => {
              child.once('exit', (code) => done(code));
              child.kill('SIGTERM');
            }),
        });
      }
    });
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    child.once('exit', (code) => reject(new Error(`exited with ${code}: ${output}`)));
  });
}

describe('the switchboard process', function () {
  // Each case starts the app through tsx several times (about 1.5 s each on two cores, more under load).
  this.timeout(60_000);
  let dataDir: string;
  beforeEach(() => (dataDir = mkdtempSync(join(tmpdir(), 'switchboard-proc-'))));
  afterEach(() => rmSync(dataDir, { recursive: true, force: true }));

  it('stops at start-up with one line naming a bad variable', () => {
    const res = spawnSync(process.execPath, [...TSX, 'src/main.ts'], { env: env({ PORT: 'http' }), encoding: 'utf8' });
    expect(res.status).to.equal(78);
    expect(res.stderr.trim().split('\n')).to.have.length(1);
    expect(res.stderr).to.match(/PORT must be an integer/);
    const cluster = spawnSync(process.execPath, [...TSX, 'src/main.ts'], {
      env: env({ REDIS_URL: 'redis://127.0.0.1:1' }),
      encoding: 'utf8',
    });
    expect(cluster.status).to.equal(78);
    expect(cluster.stderr).to.match(/ENCRYPTION_KEY is required/);
    // MongoDB with in-process leases: every node would own every instance.
    const mongoAlone = spawnSync(process.execPath, [...TSX, 'src/main.ts'], {
      env: env({ MONGO_URL: 'mongodb://127.0.0.1:1/db', ENCRYPTION_KEY: 'ab'.repeat(32) }),
      encoding: 'utf8',
    });
    expect(mongoAlone.status).to.equal(78);
    expect(mongoAlone.stderr.trim().split('\n')).to.have.length(1);
    expect(mongoAlone.stderr).to.match(/MONGO_URL needs REDIS_URL/);
  });

  it('gives up on an unreachable MongoDB after MONGO_CONNECT_TIMEOUT_MS: exit 69, one line naming the host', async () => {
    const port = await closedPort();
    const started = Date.now();
    const res = spawnSync(process.execPath, [...TSX, 'src/main.ts'], {
      env: env({
        MONGO_URL: `mongodb://127.0.0.1:${port}/db`,
        REDIS_URL: 'redis://127.0.0.1:1',
        ENCRYPTION_KEY: 'ab'.repeat(32),
        MONGO_CONNECT_TIMEOUT_MS: '1500',
        MONGO_SERVER_SELECTION_TIMEOUT_MS: '200',
        LOG_LEVEL: 'warn',
        PORT: '0',
      }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status, res.stderr).to.equal(69);
    expect(Date.now() - started).to.be.greaterThan(1500);
    expect(res.stderr.trim().split('\n'), res.stderr).to.have.length(1);
    expect(res.stderr).to.match(
      new RegExp(`^switchboard: cannot start: cannot reach MongoDB at 127\\.0\\.0\\.1:${port}: `),
    );
    // One log line per attempt on the way, never a stack trace.
    expect(res.stdout.match(/MongoDB not reachable yet; retrying/g)?.length ?? 0).to.be.greaterThan(1);
    expect(res.stdout + res.stderr).to.not.match(/\n\s+at /);
  });

  it('gives up on an unreachable Redis after REDIS_CONNECT_TIMEOUT_MS: exit 69, one line, no stack trace', async () => {
    const port = await closedPort();
    const res = spawnSync(process.execPath, [...TSX, 'src/main.ts'], {
      env: env({
        REDIS_URL: `redis://127.0.0.1:${port}`,
        REDIS_CONNECT_TIMEOUT_MS: '1200',
        ENCRYPTION_KEY: 'ab'.repeat(32),
        LOG_LEVEL: 'warn',
        PORT: '0',
      }),
      encoding: 'utf8',
      timeout: 30_000,
    });
    expect(res.status, res.stderr).to.equal(69);
    expect(res.stderr.trim().split('\n'), res.stderr).to.have.length(1);
    expect(res.stderr).to.match(
      new RegExp(`^switchboard: cannot start: cannot connect to Redis \\(redis://127\\.0\\.0\\.1:${port}\\)`),
    );
    expect(res.stdout.match(/Redis not reachable yet; retrying/g)?.length ?? 0).to.be.greaterThan(1);
    expect(res.stdout + res.stderr).to.not.match(/\n\s+at /);
  });

  it('prints the default account token on the first start only, and exits cleanly on SIGTERM', async () => {
    const first = await startMain(dataDir);
    expect(first.output).to.match(/"account":"default","token":"[A-Za-z0-9_-]{43}"/);
    expect(await first.stop()).to.equal(0);
    const second = await startMain(dataDir);
    expect(second.output).not.to.include('"token"');
    expect(await second.stop()).to.equal(0);
  });

  it('manages accounts from the CLI', () => {
    const cli = (...args: string[]) =>
      spawnSync(process.execPath, [...TSX, 'src/cli.ts', ...args], {
        env: env({ DATA_DIR: dataDir }),
        encoding: 'utf8',
      });
    const created = cli('account', 'create', 'acme', '--quota', '3', '--origin', 'https://app.acme.example');
    expect(created.status, created.stderr).to.equal(0);
    const account = JSON.parse(created.stdout) as {
      name: string;
      token: string;
      instanceQuota: number;
      allowedOrigins: string[];
    };
    expect(account).to.include({ name: 'acme', instanceQuota: 3 });
    expect(account.allowedOrigins).to.deep.equal(['https://app.acme.example']);
    expect(account.token).to.have.length(43);
    expect(cli('account', 'create', 'acme').status).to.equal(1);
    const listed = cli('account', 'list');
    expect(listed.stdout).to.include('"name":"acme"').and.not.to.include(account.token);
    const rotated = JSON.parse(cli('account', 'token', 'acme').stdout) as { token: string };
    expect(rotated.token).not.to.equal(account.token);
    expect(cli('account', 'token', 'nobody').stderr).to.include('Account not found');
    const disabled = cli('account', 'disable', 'acme');
    expect(disabled.status, disabled.stderr).to.equal(0);
    expect(JSON.parse(disabled.stdout)).to.include({ name: 'acme', disabled: true });
    expect(JSON.parse(cli('account', 'enable', 'acme').stdout)).to.include({ name: 'acme', disabled: false });
    const deleted = cli('account', 'delete', 'acme');
    expect(deleted.status, deleted.stderr).to.equal(0);
    expect(JSON.parse(deleted.stdout)).to.deep.equal({ name: 'acme', deleted: true, deletedInstances: [] });
    expect(cli('account', 'list').stdout).not.to.include('"name":"acme"');
    expect(cli('bogus').status).to.equal(64);
  });
});
