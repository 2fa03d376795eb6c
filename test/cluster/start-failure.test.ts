import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'chai';
import { pino } from 'pino';
import { loadConfig } from '../../src/config/config.js';
import { startNode } from '../../src/node.js';
import { connectRedis, freePort, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

describe('a node that fails to start halfway', () => {
  let redis: RedisServer;
  let taken: Server;
  let port: number;
  let dir: string;

  before(async () => {
    redis = await startRedisServer();
    port = await freePort();
    taken = createServer().listen(port, '127.0.0.1');
    await new Promise((r) => taken.once('listening', r));
    dir = mkdtempSync(join(tmpdir(), 'switchboard-start-failure-'));
  });
  after(async () => {
    taken.close();
    await redis.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('undoes what it started: its Redis connections are closed when the port is taken', async () => {
    const watcher = await connectRedis(redis.url);
    const clients = async () =>
      String(await watcher.call('CLIENT', 'LIST'))
        .trim()
        .split('\n').length;
    const before = await clients();
    const config = loadConfig({
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: dir,
      REDIS_URL: redis.url,
      ENCRYPTION_KEY: '11'.repeat(32),
      ADMIN_TOKEN: 'test-admin-token-0123456789',
      MSGNET_DRIVER: 'sandbox',
      LOG_LEVEL: 'silent',
    });
    let failure: unknown;
    await startNode(config, { logger: pino({ level: 'silent' }) }).catch((err: unknown) => (failure = err));
    expect(String(failure)).to.match(/EADDRINUSE/);
    // Disconnections are seen by the server a moment after quit() resolves.
    const deadline = Date.now() + 3000;
    while ((await clients()) > before && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(await clients(), 'Redis connections left open').to.equal(before);
    watcher.disconnect();
  });
});
