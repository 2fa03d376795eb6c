import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config/config.js';

const KEY_HEX = 'a'.repeat(64);

describe('loadConfig', () => {
  it('gives the embedded defaults with an empty environment', () => {
    const c = loadConfig({});
    expect(c).to.include({ port: 8080, host: '127.0.0.1', dataDir: './data', msgnetDriver: 'baileys', embedded: true });
    expect(c).to.include({ trustProxy: false, allowInsecureHttp: false, allowPrivateUrls: false, logLevel: 'info' });
    expect(c.redisUrls).to.deep.equal([]);
    expect(c.encryptionKey).to.equal(undefined);
    expect(c.rateLimitPerMinute).to.equal(100);
    expect(c.rateLimitCreatePerMinute).to.equal(20);
  });

  it('gives the media limits and history retention, with ALLOW_PRIVATE_URLS carried into the media settings', () => {
    expect(loadConfig({}).media).to.deep.equal({
      allowPrivateUrls: false,
      maxBytes: 16 * 1024 * 1024,
      fetchTimeoutMs: 20_000,
      ffmpegPath: undefined,
      ffprobePath: undefined,
    });
    expect(loadConfig({}).messageRetentionDays).to.equal(30);
    const c = loadConfig({
      ALLOW_PRIVATE_URLS: 'true',
      MEDIA_MAX_BYTES: '1048576',
      MEDIA_FETCH_TIMEOUT_MS: '5000',
      MESSAGE_RETENTION_DAYS: '0',
      FFMPEG_PATH: '/opt/ffmpeg/bin/ffmpeg',
    });
    expect(c.media).to.deep.equal({
      allowPrivateUrls: true,
      maxBytes: 1_048_576,
      fetchTimeoutMs: 5000,
      ffmpegPath: '/opt/ffmpeg/bin/ffmpeg',
      ffprobePath: undefined,
    });
    expect(c.messageRetentionDays).to.equal(0);
    expect(() => loadConfig({ MEDIA_MAX_BYTES: '512' })).to.throw(
      ConfigError,
      /^MEDIA_MAX_BYTES must be an integer from 1024/,
    );
    expect(() => loadConfig({ MESSAGE_RETENTION_DAYS: '-1' })).to.throw(
      ConfigError,
      /^MESSAGE_RETENTION_DAYS must be an integer/,
    );
  });

  it('CONNECT_RATE_PER_SECOND: 5 by default, decimals allowed, 0 and words refused', () => {
    expect(loadConfig({}).connectRatePerSecond).to.equal(5);
    expect(loadConfig({ CONNECT_RATE_PER_SECOND: '2.5' }).connectRatePerSecond).to.equal(2.5);
    for (const bad of ['0', 'fast', '5000']) {
      expect(() => loadConfig({ CONNECT_RATE_PER_SECOND: bad })).to.throw(
        ConfigError,
        /^CONNECT_RATE_PER_SECOND must be a number from 0.1 to 1000/,
      );
    }
  });

  it('gives the received-media options: kept-copy TTL, object URL expiry or public URLs, storage deadline', () => {
    expect(loadConfig({}).receivedMedia).to.deep.equal({
      blobTtlMs: 3_600_000,
      urlExpirySeconds: 604_800,
      publicUrls: false,
      storageTimeoutMs: 30_000,
    });
    const c = loadConfig({
      MEDIA_BLOB_TTL: '90s',
      S3_URL_EXPIRY: '15m',
      S3_PUBLIC_URLS: 'true',
      S3_TIMEOUT_MS: '5000',
    });
    expect(c.receivedMedia).to.deep.equal({
      blobTtlMs: 90_000,
      urlExpirySeconds: 900,
      publicUrls: true,
      storageTimeoutMs: 5000,
    });
    expect(() => loadConfig({ S3_URL_EXPIRY: '8d' })).to.throw(ConfigError, /^S3_URL_EXPIRY must be from 1s to 7d/);
    expect(() => loadConfig({ MEDIA_BLOB_TTL: '1mo' })).to.throw(
      ConfigError,
      /^MEDIA_BLOB_TTL must be a fixed duration/,
    );
    expect(() => loadConfig({ MEDIA_BLOB_TTL: 'soon' })).to.throw(ConfigError, /^MEDIA_BLOB_TTL must be a duration/);
  });

  it('listens on all interfaces by default in cluster mode', () => {
    const c = loadConfig({ REDIS_URL: 'redis://r1:6379,redis://r2:6379', ENCRYPTION_KEY: KEY_HEX });
    expect(c.embedded).to.equal(false);
    expect(c.host).to.equal('0.0.0.0');
    expect(c.redisUrls).to.deep.equal(['redis://r1:6379', 'redis://r2:6379']);
  });

  it('reads REDIS_MODE (single by default) and the sentinel master name, each only where it means something', () => {
    const base = { REDIS_URL: 'redis://s1:26379,redis://s2:26379', ENCRYPTION_KEY: KEY_HEX };
    expect(loadConfig(base)).to.include({ redisMode: 'single', redisSentinelMaster: undefined });
    expect(loadConfig({ ...base, REDIS_MODE: 'cluster' }).redisMode).to.equal('cluster');
    const sentinel = loadConfig({ ...base, REDIS_MODE: 'sentinel', REDIS_SENTINEL_MASTER: 'main' });
    expect(sentinel).to.include({ redisMode: 'sentinel', redisSentinelMaster: 'main' });
    expect(() => loadConfig({ ...base, REDIS_MODE: 'sentinel' })).to.throw(ConfigError, /REDIS_SENTINEL_MASTER/);
    expect(() => loadConfig({ ...base, REDIS_SENTINEL_MASTER: 'main' })).to.throw(ConfigError, /REDIS_SENTINEL_MASTER/);
    expect(() => loadConfig({ REDIS_MODE: 'cluster' })).to.throw(ConfigError, /^REDIS_MODE=cluster needs REDIS_URL/);
    expect(() => loadConfig({ ...base, REDIS_MODE: 'ring' })).to.throw(ConfigError, /^REDIS_MODE/);
  });

  it('accepts the key as hex or base64 (32 bytes)', () => {
    expect(loadConfig({ ENCRYPTION_KEY: KEY_HEX }).encryptionKey?.length).to.equal(32);
    const b64 = Buffer.alloc(32, 7).toString('base64');
    expect(loadConfig({ ENCRYPTION_KEY: b64 }).encryptionKey?.equals(Buffer.alloc(32, 7))).to.equal(true);
  });

  const bad: [Record<string, string>, RegExp][] = [
    [{ PORT: 'eighty' }, /^PORT must be an integer/],
    [{ PORT: '70000' }, /^PORT must be an integer/],
    [{ TRUST_PROXY: 'maybe' }, /^TRUST_PROXY must be true or false/],
    [{ MSGNET_DRIVER: 'telegram' }, /^MSGNET_DRIVER/],
    [{ LOG_LEVEL: 'loud' }, /^LOG_LEVEL/],
    [{ ENCRYPTION_KEY: 'short' }, /^ENCRYPTION_KEY must be 32 bytes/],
    [{ ENCRYPTION_KEY: Buffer.alloc(16).toString('base64') }, /^ENCRYPTION_KEY must be 32 bytes/],
    [{ REDIS_URL: 'redis://r:6379' }, /^ENCRYPTION_KEY is required/],
    [{ MONGO_URL: 'mongodb://m/db', REDIS_URL: 'redis://r:6379' }, /^ENCRYPTION_KEY is required/],
    // In-process leases on a shared MongoDB: every node would own every instance.
    [{ MONGO_URL: 'mongodb://m/db', ENCRYPTION_KEY: KEY_HEX }, /^MONGO_URL needs REDIS_URL/],
    [{ REDIS_URL: 'http://r', ENCRYPTION_KEY: KEY_HEX }, /^REDIS_URL/],
    [{ MONGO_URL: 'postgres://x', REDIS_URL: 'redis://r:6379', ENCRYPTION_KEY: KEY_HEX }, /^MONGO_URL/],
    [{ TLS_CERT_FILE: '/x.pem' }, /TLS_CERT_FILE and TLS_KEY_FILE/],
    [{ ADMIN_TOKEN: 'short' }, /^ADMIN_TOKEN must be at least 16/],
    [{ METRICS_TOKEN: 'short' }, /^METRICS_TOKEN must be at least 16/],
  ];
  for (const [env, message] of bad) {
    it(`refuses ${JSON.stringify(env)} with one line naming the variable`, () => {
      let caught: unknown;
      try {
        loadConfig(env);
      } catch (err) {
        caught = err;
      }
      expect(caught).to.be.instanceOf(ConfigError);
      expect((caught as Error).message).to.match(message);
      expect((caught as Error).message).not.to.include('\n');
    });
  }
});
