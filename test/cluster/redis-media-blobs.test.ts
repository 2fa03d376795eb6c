import { expect } from 'chai';
import type { Redis } from 'ioredis';
import { RedisMediaBlobs } from '../../src/media/media-blobs.js';
import { keys } from '../../src/redis/keys.js';
import { connectRedis, startRedisServer } from '../helpers/redis-server.js';
import type { RedisServer } from '../helpers/redis-server.js';

/** Cluster mode keeps one copy of a received file in Redis, binary-safe, with the MEDIA_BLOB_TTL. */
describe('RedisMediaBlobs (real Redis)', () => {
  let redis: RedisServer;
  let client: Redis;

  before(async () => {
    redis = await startRedisServer();
    client = await connectRedis(redis.url);
  });

  after(async () => {
    client.disconnect();
    await redis.stop();
  });

  it('keeps the bytes exactly, under the documented key, with the TTL', async () => {
    const blobs = new RedisMediaBlobs(client);
    const file = Buffer.from([0, 255, 1, 254, 0x0a, 0x0d, 0]);
    await blobs.put('inst-1', 'MSG1', file, 60_000);
    expect((await blobs.get('inst-1', 'MSG1'))?.equals(file)).to.equal(true);
    const ttl = await client.pttl(keys.mediaBlob('inst-1', 'MSG1'));
    expect(ttl).to.be.greaterThan(0).and.at.most(60_000);
    expect(await blobs.get('inst-1', 'OTHER')).to.equal(undefined);
  });

  it('reads nothing once the copy has expired', async () => {
    const blobs = new RedisMediaBlobs(client);
    await blobs.put('inst-1', 'GONE', Buffer.from('x'), 60_000);
    await client.pexpire(keys.mediaBlob('inst-1', 'GONE'), 1);
    while ((await client.exists(keys.mediaBlob('inst-1', 'GONE'))) === 1) await new Promise((r) => setTimeout(r, 5));
    expect(await blobs.get('inst-1', 'GONE')).to.equal(undefined);
  });
});
