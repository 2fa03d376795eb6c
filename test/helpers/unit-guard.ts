import childProcess from 'node:child_process';
import { syncBuiltinESMExports } from 'node:module';
import net from 'node:net';

/**
 * `npm run test:unit` loads this first: unit tests run in this process only, so a child process (ffmpeg,
 * redis-server, a node) or a listening socket (a fake server) fails the test that asks for it, and the
 * test belongs in test/integration/ (or test/cluster/) instead.
 */
const refuse = (what: string) => () => {
  throw new Error(`unit tests start no ${what}: move this test to test/integration/`);
};

for (const name of ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const) {
  (childProcess as unknown as Record<string, unknown>)[name] = refuse('child process');
}
net.Server.prototype.listen = refuse('listening socket') as typeof net.Server.prototype.listen;
// The named exports of node:child_process follow the patched functions.
syncBuiltinESMExports();
