import { validate as validCron } from 'node-cron';
import { z } from 'zod';
import { parseDuration } from './duration.js';
import type { Duration } from './duration.js';
import { bool, decimal, duration, int, list, optionalString } from './env-value-schemas.js';
import { NamedError } from '../errors.js';
import { parseWhatsAppEndpoint } from './whatsapp-endpoint.js';
import type { WhatsAppEndpointConfig } from './whatsapp-endpoint.js';

/**
 * Every option of a Switchboard node. This module is the only reader of `process.env`. Its defaults are
 * stated once, in the schema below; the `@default` tags of `Config` and the README's configuration table
 * repeat them for readers, and test/unit/config-defaults.test.ts checks that they agree.
 */

const LOG_LEVELS = ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const;
const DRIVERS = ['baileys', 'sandbox'] as const;
const SQLITE_SYNC_MODES = ['full', 'normal'] as const;
const REDIS_MODES = ['single', 'cluster', 'sentinel'] as const;

const envSchema = z.object({
  PORT: int('PORT', 8080, 0, 65535),
  HOST: optionalString,
  DATA_DIR: optionalString.transform((v) => v ?? './data'),
  REDIS_URL: list,
  REDIS_MODE: optionalString.pipe(z.enum(REDIS_MODES).optional()).transform((v) => v ?? 'single'),
  REDIS_SENTINEL_MASTER: optionalString,
  REDIS_CONNECT_TIMEOUT_MS: int('REDIS_CONNECT_TIMEOUT_MS', 30_000, 0, 600_000),
  MONGO_URL: optionalString,
  MONGO_DB: optionalString.transform((v) => v ?? 'switchboard'),
  MONGO_CONNECT_TIMEOUT_MS: int('MONGO_CONNECT_TIMEOUT_MS', 30_000, 0, 600_000),
  MONGO_SERVER_SELECTION_TIMEOUT_MS: int('MONGO_SERVER_SELECTION_TIMEOUT_MS', 1000, 100, 60_000),
  SQLITE_BUSY_TIMEOUT_MS: int('SQLITE_BUSY_TIMEOUT_MS', 5000, 0, 60_000),
  SQLITE_SYNCHRONOUS: optionalString.pipe(z.enum(SQLITE_SYNC_MODES).optional()).transform((v) => v ?? 'full'),
  ADMIN_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'ADMIN_TOKEN must be at least 16 characters',
  }),
  METRICS_TOKEN: optionalString.refine((v) => v === undefined || v.length >= 16, {
    message: 'METRICS_TOKEN must be at least 16 characters',
  }),
  ENCRYPTION_KEY: optionalString,
  MSGNET_DRIVER: optionalString.pipe(z.enum(DRIVERS).optional()).transform((v) => v ?? 'baileys'),
  WHATSAPP_WS_URL: optionalString,
  WHATSAPP_CERT_ROOT: optionalString,
  WHATSAPP_MEDIA_CA: optionalString,
  CONNECT_RATE_PER_SECOND: decimal('CONNECT_RATE_PER_SECOND', 5, 0.1, 1000),
  CONNECT_MAX_LOOP_DELAY_MS: int('CONNECT_MAX_LOOP_DELAY_MS', 300, 20, 60_000),
  ALLOWED_WS_ORIGINS: list,
  TLS_CERT_FILE: optionalString,
  TLS_KEY_FILE: optionalString,
  TRUST_PROXY: bool('TRUST_PROXY', false),
  ALLOW_INSECURE_HTTP: bool('ALLOW_INSECURE_HTTP', false),
  ALLOW_PRIVATE_URLS: bool('ALLOW_PRIVATE_URLS', false),
  LOG_LEVEL: optionalString.pipe(z.enum(LOG_LEVELS).optional()).transform((v) => v ?? 'info'),
  PUBLIC_BASE_URL: optionalString,
  DEFAULT_INSTANCE_QUOTA: int('DEFAULT_INSTANCE_QUOTA', 100, 0, 1_000_000),
  RATE_LIMIT_PER_MINUTE: int('RATE_LIMIT_PER_MINUTE', 100, 1, 1_000_000),
  RATE_LIMIT_CREATE_PER_MINUTE: int('RATE_LIMIT_CREATE_PER_MINUTE', 20, 1, 1_000_000),
  RATE_LIMIT_BATCH_MS: int('RATE_LIMIT_BATCH_MS', 100, 0, 10_000),
  MAX_BODY_BYTES: int('MAX_BODY_BYTES', 2 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  HTTP_HEADERS_TIMEOUT_MS: int('HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 120_000),
  HTTP_REQUEST_TIMEOUT_MS: int('HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 600_000),
  MEDIA_MAX_BYTES: int('MEDIA_MAX_BYTES', 16 * 1024 * 1024, 1024, 64 * 1024 * 1024),
  MEDIA_FETCH_TIMEOUT_MS: int('MEDIA_FETCH_TIMEOUT_MS', 20_000, 1000, 300_000),
  FFMPEG_PATH: optionalString,
  FFPROBE_PATH: optionalString,
  MESSAGE_RETENTION_DAYS: int('MESSAGE_RETENTION_DAYS', 30, 0, 3650),
  MEDIA_BLOB_TTL: duration('MEDIA_BLOB_TTL', '1h'),
  S3_URL_EXPIRY: duration('S3_URL_EXPIRY', '7d'),
  S3_PUBLIC_URLS: bool('S3_PUBLIC_URLS', false),
  S3_TIMEOUT_MS: int('S3_TIMEOUT_MS', 30_000, 100, 600_000),
  NODE_ID: optionalString,
  LEASE_TTL_MS: int('LEASE_TTL_MS', 2500, 500, 600_000),
  HEARTBEAT_MS: int('HEARTBEAT_MS', 500, 100, 60_000),
  NODE_TIMEOUT_MS: int('NODE_TIMEOUT_MS', 2000, 300, 600_000),
  RECONCILE_MS: int('RECONCILE_MS', 1000, 50, 600_000),
  HANDOFF_MOVES: int('HANDOFF_MOVES', 20, 1, 100_000),
  HANDOFF_WINDOW_MS: int('HANDOFF_WINDOW_MS', 10_000, 100, 3_600_000),
  ACTOR_MAX_QUEUE: int('ACTOR_MAX_QUEUE', 1000, 1, 1_000_000),
  CALL_TIMEOUT_MS: int('CALL_TIMEOUT_MS', 30_000, 100, 600_000),
  DRAIN_TIMEOUT_MS: int('DRAIN_TIMEOUT_MS', 10_000, 0, 600_000),
  WS_PING_INTERVAL_MS: int('WS_PING_INTERVAL_MS', 25_000, 10, 600_000),
  WS_PONG_TIMEOUT_MS: int('WS_PONG_TIMEOUT_MS', 60_000, 10, 600_000),
  WS_MAX_BUFFERED_BYTES: int('WS_MAX_BUFFERED_BYTES', 1024 * 1024, 1024, 1024 * 1024 * 1024),
  WS_CONFIG_REFRESH_MS: int('WS_CONFIG_REFRESH_MS', 2000, 10, 600_000),
  WEBHOOK_MAX_ATTEMPTS: int('WEBHOOK_MAX_ATTEMPTS', 8, 1, 100),
  WEBHOOK_RETRY_BASE_MS: int('WEBHOOK_RETRY_BASE_MS', 1000, 10, 3_600_000),
  WEBHOOK_RETRY_MAX_MS: int('WEBHOOK_RETRY_MAX_MS', 300_000, 10, 86_400_000),
  WEBHOOK_TIMEOUT_MS: int('WEBHOOK_TIMEOUT_MS', 10_000, 100, 300_000),
  WEBHOOK_CONCURRENCY: int('WEBHOOK_CONCURRENCY', 64, 1, 10_000),
  WEBHOOK_LEASE_MS: int('WEBHOOK_LEASE_MS', 30_000, 500, 3_600_000),
  AMQP_URL: optionalString,
  AMQP_EXCHANGE: optionalString.transform((v) => v ?? 'switchboard.events'),
  NATS_URL: optionalString,
  NATS_STREAM: optionalString.transform((v) => v ?? 'SWITCHBOARD_EVENTS'),
  NATS_STREAM_MAX_AGE_MS: int('NATS_STREAM_MAX_AGE_MS', 604_800_000, 0, 31_536_000_000),
  NATS_STREAM_MAX_BYTES: int('NATS_STREAM_MAX_BYTES', -1, -1, Number.MAX_SAFE_INTEGER),
  BILLING_TRIAL: duration('BILLING_TRIAL', '7d'),
  BILLING_TRIAL_NOTICE: duration('BILLING_TRIAL_NOTICE', '24h'),
  BILLING_CYCLE: duration('BILLING_CYCLE', '1mo'),
  BILLING_BASE_CENTS: int('BILLING_BASE_CENTS', 0, 0, 1_000_000_000),
  BILLING_INSTANCE_MONTHLY_CENTS: int('BILLING_INSTANCE_MONTHLY_CENTS', 0, 0, 1_000_000_000),
  BILLING_CRON: optionalString,
  BILLING_TICK: optionalString.transform((value, ctx) => {
    if (value === undefined) return undefined;
    const d = parseDuration(value);
    if (!d) {
      ctx.addIssue({ code: 'custom', message: `BILLING_TICK must be a duration like 500ms or 5s, got "${value}"` });
      return z.NEVER;
    }
    return d;
  }),
  HELPDESK_ENABLED: bool('HELPDESK_ENABLED', true),
  HELPDESK_TIMEOUT_MS: int('HELPDESK_TIMEOUT_MS', 10_000, 50, 300_000),
  HELPDESK_RETRIES: int('HELPDESK_RETRIES', 2, 0, 10),
  HELPDESK_ERROR_AFTER: int('HELPDESK_ERROR_AFTER', 3, 1, 1000),
  HELPDESK_RETRY_INTERVAL_MS: int('HELPDESK_RETRY_INTERVAL_MS', 30_000, 50, 3_600_000),
  HELPDESK_WEBHOOK_RATE_PER_MINUTE: int('HELPDESK_WEBHOOK_RATE_PER_MINUTE', 1200, 1, 1_000_000),
  CHATBOT_ENABLED: bool('CHATBOT_ENABLED', true),
  CHATBOT_TIMEOUT_MS: int('CHATBOT_TIMEOUT_MS', 15_000, 500, 120_000),
  TEST_PROBE_FILE: optionalString,
  TEST_PROBE_WRITE_MS: int('TEST_PROBE_WRITE_MS', 100, 0, 60_000),
});

export type MsgNetDriverName = (typeof DRIVERS)[number];
export type LogLevel = (typeof LOG_LEVELS)[number];
export type RedisMode = (typeof REDIS_MODES)[number];

export interface Config {
  /** TCP port of the HTTP(S) listener. @default 8080 */
  port: number;
  /** Listen address. @default 127.0.0.1 in embedded mode, 0.0.0.0 in cluster mode */
  host: string;
  /** Directory of the SQLite file and the generated key file. @default ./data */
  dataDir: string;
  /**
   * REDIS_URL: Redis for cluster coordination; empty = embedded (in-process) coordination. What the URLs
   * are depends on `redisMode`: independent masters, a Redis Cluster's seed nodes, or the sentinels.
   */
  redisUrls: string[];
  /**
   * REDIS_MODE: `single` (one Redis, or several independent masters whose majority holds the leases),
   * `cluster` (one Redis Cluster; keys hash-tagged, pub/sub sharded) or `sentinel` (a master found and
   * followed through its sentinels). @default single
   */
  redisMode: RedisMode;
  /** REDIS_SENTINEL_MASTER: the master's name at the sentinels (sentinel mode only). */
  redisSentinelMaster: string | undefined;
  /** REDIS_CONNECT_TIMEOUT_MS: how long start-up keeps trying to reach Redis before exit 69. @default 30000 */
  redisConnectTimeoutMs: number;
  /** MongoDB connection string; unset = SQLite under `dataDir`. */
  mongoUrl: string | undefined;
  /** MongoDB database name. @default switchboard */
  mongoDb: string;
  /** MONGO_CONNECT_TIMEOUT_MS: how long start-up keeps trying to reach MongoDB before exit 69. @default 30000 */
  mongoConnectTimeoutMs: number;
  /** MONGO_SERVER_SELECTION_TIMEOUT_MS: how long one operation waits for a reachable server. @default 1000 */
  mongoServerSelectionTimeoutMs: number;
  /**
   * SQLITE_BUSY_TIMEOUT_MS: how long a call waits for another process's lock on the file before 503 (on a
   * timer: the event loop runs meanwhile). @default 5000
   */
  sqliteBusyTimeoutMs: number;
  /**
   * SQLITE_SYNCHRONOUS: `full` makes every acknowledged write (settings, idempotency records, queued
   * events) survive a power loss, at one fsync per commit; `normal` survives a crash of the process but
   * may roll back the last commits on a power loss or an OS crash. @default full
   */
  sqliteSynchronous: (typeof SQLITE_SYNC_MODES)[number];
  /** The global (operator) token; unset = the admin API is closed. */
  adminToken: string | undefined;
  /** A token that may only read GET /metrics (besides the global token); unset = the global token only. */
  metricsToken: string | undefined;
  /** AES-256-GCM key given as 64 hex characters or base64 of 32 bytes; unset = key file (embedded only). */
  encryptionKey: Buffer | undefined;
  msgnetDriver: MsgNetDriverName;
  /** A WhatsApp simulator instead of WhatsApp (WHATSAPP_WS_URL and its two trust anchors); unset = WhatsApp. */
  whatsapp: WhatsAppEndpointConfig | undefined;
  /**
   * Logins to WhatsApp per second at most from this node (starts, reconnects), with jitter, the session
   * away the longest first; a 429 or 503 pauses them all on WhatsApp Web's ladder. @default 5
   */
  connectRatePerSecond: number;
  /**
   * Logins wait while this node's event loop has run this late (ms) within the last second: a node that
   * takes on more logins than it can serve falls behind on its lease and loses every instance. @default 300
   */
  connectMaxLoopDelayMs: number;
  /** Browser origins allowed to open WebSockets besides same-origin (ALLOWED_WS_ORIGINS). */
  allowedWsOrigins: string[];
  websocket: WebSocketOptions;
  tls: { certFile: string; keyFile: string } | undefined;
  trustProxy: boolean;
  allowInsecureHttp: boolean;
  allowPrivateUrls: boolean;
  logLevel: LogLevel;
  /** Base URL put in event envelopes; derived from host and port when unset. */
  publicBaseUrl: string | undefined;
  defaultInstanceQuota: number;
  rateLimitPerMinute: number;
  rateLimitCreatePerMinute: number;
  maxBodyBytes: number;
  /** Slow clients: past either deadline, 408 and the connection is closed, as a load balancer in front would do. */
  httpTimeouts: {
    /** HTTP_HEADERS_TIMEOUT_MS: the whole header block must arrive within it. @default 10000 */
    headersMs: number;
    /** HTTP_REQUEST_TIMEOUT_MS: the whole request, body included, must arrive within it. @default 30000 */
    requestMs: number;
  };
  media: MediaConfig;
  receivedMedia: ReceivedMediaOptions;
  /** Days a message stays in the chat history (GET /api/chat/history); 0 = forever. @default 30 */
  messageRetentionDays: number;
  /** Stable node id; a random one per process when unset. */
  nodeId: string | undefined;
  /** Embedded = neither Redis nor MongoDB configured: one node, SQLite, in-process coordination. */
  embedded: boolean;
  cluster: ClusterOptions;
  webhooks: WebhookOptions;
  billing: BillingConfig;
  helpdesk: HelpdeskOptions;
  chatbot: ChatbotConfig;
  /** Test-only write probe (TEST_PROBE_FILE): records accepted owned writes for the cluster tests. */
  testProbe: { file: string; writeIntervalMs: number } | undefined;
}

export interface WebhookOptions {
  /** Attempts per delivery, the first included, before it goes to the dead letters. @default 8 */
  maxAttempts: number;
  /** Backoff before the second attempt; doubles each time, with jitter. @default 1000 */
  retryBaseMs: number;
  /** Longest backoff (Retry-After included). @default 300000 */
  retryMaxMs: number;
  /** One POST, connect to last byte. @default 10000 */
  timeoutMs: number;
  /** POSTs in flight per node. @default 64 */
  concurrency: number;
  /** A delivery taken by a node that died is taken again after this. @default 30000 */
  leaseMs: number;
  /** RabbitMQ (AMQP 0-9-1) as an event transport; undefined (AMQP_URL unset) = off. */
  amqp: { url: string; exchange: string } | undefined;
  /** NATS JetStream as an event transport; undefined (NATS_URL unset) = off. */
  nats: { url: string; stream: string; maxAgeMs: number; maxBytes: number } | undefined;
}

/** The helpdesk (Chatwoot) integration: the module switch and how its calls to Chatwoot behave. */
export interface HelpdeskOptions {
  /** Off: the /api/helpdesk endpoints answer 503 and creation blocks report `enabled: false`. @default true */
  enabled: boolean;
  /** One request to Chatwoot, connect to last byte. @default 10000 */
  timeoutMs: number;
  /** Further attempts of a request that failed with a network error, a timeout, 429 or 5xx. @default 2 */
  retries: number;
  /** Consecutive failed Chatwoot operations that turn the integration's status to `error`. @default 3 */
  errorAfter: number;
  /** How long messages waiting for an unreachable Chatwoot wait before the next attempt. @default 30000 */
  retryIntervalMs: number;
  /** Chatwoot webhook requests a minute per client address (their own bucket, apart from the API's). @default 1200 */
  webhookRatePerMinute: number;
}

/** What the service downloads for clients (media and profile-picture URLs), through safe fetch. */
export interface MediaConfig {
  /** ALLOW_PRIVATE_URLS, as it applies to downloads. */
  allowPrivateUrls: boolean;
  /** Largest download, and so the largest media sent. @default 16777216 (16 MiB) */
  maxBytes: number;
  /** Deadline of a whole download, redirects included. @default 20000 */
  fetchTimeoutMs: number;
  /** FFMPEG_PATH: the ffmpeg to run. @default unset: the one on PATH, else the npm package's static build */
  ffmpegPath: string | undefined;
  /** FFPROBE_PATH: the ffprobe to run. @default unset: the one on PATH, else the npm package's static build */
  ffprobePath: string | undefined;
}

/** What happens to the media an instance receives (docs/events.md, "Received media"). */
export interface ReceivedMediaOptions {
  /** How long the one copy kept for base64 deliveries and catch-up lives. @default 3600000 (1 hour) */
  blobTtlMs: number;
  /** Lifetime of the presigned object URLs put in events (at most 7 days, SigV4's limit). @default 604800 (7 days) */
  urlExpirySeconds: number;
  /** Put plain object URLs in events instead of presigned ones (the bucket must allow public reads). @default false */
  publicUrls: boolean;
  /** Deadline of one object-storage request (upload, check). @default 30000 */
  storageTimeoutMs: number;
}

export interface ClusterOptions {
  /** Node lease TTL; renewed at TTL/3 (one script call per node per renewal). @default 2500 */
  leaseTtlMs: number;
  /**
   * Cluster mode: how often a node adds the requests it counted on its own to the shared buckets in
   * Redis; 0 counts every request in Redis before answering it. @default 100
   */
  rateLimitBatchMs: number;
  /** @default 500 */
  heartbeatMs: number;
  /** A node silent this long is gone: within a lease's lapse, so that membership does not delay a failover. @default 2000 */
  nodeTimeoutMs: number;
  /** Placement reconcile period. @default 1000 */
  reconcileMs: number;
  /** Handoffs per window (`handoffWindowMs`) per node when a node joins. @default 20 */
  handoffMoves: number;
  /** @default 10000 */
  handoffWindowMs: number;
  /** Calls waiting in one actor's mailbox beyond this are refused with 503. @default 1000 */
  actorMaxQueue: number;
  /** Deadline of a call to an actor. @default 30000 */
  callTimeoutMs: number;
  /** Longest wait for queued calls when an actor hands off. @default 10000 */
  drainTimeoutMs: number;
}

export interface WebSocketOptions {
  /** The server pings every socket this often. @default 25000 */
  pingIntervalMs: number;
  /** A socket that has not answered a ping with a pong this long after it is dropped (spec: 60 s). @default 60000 */
  pongTimeoutMs: number;
  /** A socket with more than this many bytes waiting to be sent is unregistered and closed. @default 1048576 */
  maxBufferedBytes: number;
  /** How often each node re-reads the WebSocket configuration of the instances it holds sockets for. @default 2000 */
  configRefreshMs: number;
}

/** The billing model (README, "Billing"): trials per instance, renewals per account. */
export interface BillingConfig {
  /** How long an instance's trial lasts from its creation. @default 7d */
  trial: Duration;
  /** How long before the trial's end `enterprise.trial.ending` is sent. @default 24h */
  trialNotice: Duration;
  /** An account's billing period, from its creation. @default 1mo */
  cycle: Duration;
  /** The floor charged every period. @default 0 */
  baseCents: number;
  /** The price of one instance billed for a whole period. @default 0 */
  instanceMonthlyCents: number;
  /** When the cron looks for due events (node-cron syntax, seconds allowed). @default * * * * * (every minute) */
  cron: string;
  /** A fixed interval used instead of `cron`, for sub-second ticks in tests. @default unset */
  tickMs: number | undefined;
}

/** The chatbot module (Typebot flows answering on WhatsApp). */
export interface ChatbotConfig {
  /** Off: the chatbot endpoints answer 503 `integration gateway not configured` and no bot runs. @default true */
  enabled: boolean;
  /** Deadline of one call to a flow (startChat, continueChat). @default 15000 */
  timeoutMs: number;
}

/** Every environment variable a node reads (what deploy manifests and the README may name). */
export const ENV_OPTIONS: readonly string[] = Object.keys(envSchema.shape);

/** What each variable is when unset, as the schema above states it (the README's table is checked against it). */
export function envDefaults(): Record<string, unknown> {
  return Object.fromEntries(Object.entries(envSchema.shape).map(([name, schema]) => [name, schema.parse(undefined)]));
}

/** node-cron's every-minute expression. */
export const DEFAULT_BILLING_CRON = '* * * * *';

export class ConfigError extends NamedError {}

function parseKey(raw: string): Buffer {
  if (/^[0-9a-fA-F]{64}$/.test(raw)) return Buffer.from(raw, 'hex');
  if (/^[A-Za-z0-9+/_-]+={0,2}$/.test(raw)) {
    const key = Buffer.from(raw, raw.includes('-') || raw.includes('_') ? 'base64url' : 'base64');
    if (key.length === 32) return key;
  }
  throw new ConfigError('ENCRYPTION_KEY must be 32 bytes given as 64 hex characters or base64');
}

/**
 * Reads and validates the environment once. Throws a ConfigError whose message is one line naming the
 * first bad variable.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): Config {
  const parsed = envSchema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const variable = String(issue?.path[0] ?? 'environment');
    const detail = issue?.message ?? 'invalid value';
    throw new ConfigError(detail.includes(variable) ? detail : `${variable}: ${detail}`);
  }
  const e = parsed.data;
  const embedded = e.REDIS_URL.length === 0 && e.MONGO_URL === undefined;
  if ((e.TLS_CERT_FILE === undefined) !== (e.TLS_KEY_FILE === undefined)) {
    throw new ConfigError('TLS_CERT_FILE and TLS_KEY_FILE must be set together');
  }
  for (const url of e.REDIS_URL) {
    if (!/^rediss?:\/\//.test(url)) throw new ConfigError(`REDIS_URL: "${url}" is not a redis:// or rediss:// URL`);
  }
  if (e.REDIS_MODE !== 'single' && e.REDIS_URL.length === 0) {
    throw new ConfigError(
      `REDIS_MODE=${e.REDIS_MODE} needs REDIS_URL (the ${e.REDIS_MODE === 'cluster' ? 'seed nodes' : 'sentinels'})`,
    );
  }
  if ((e.REDIS_MODE === 'sentinel') !== (e.REDIS_SENTINEL_MASTER !== undefined)) {
    throw new ConfigError('REDIS_SENTINEL_MASTER is set exactly when REDIS_MODE=sentinel (the master name)');
  }
  // In-process leases cannot see another process: two nodes on one MongoDB would both own everything.
  if (e.MONGO_URL !== undefined && e.REDIS_URL.length === 0) {
    throw new ConfigError('MONGO_URL needs REDIS_URL: nodes sharing MongoDB coordinate ownership through Redis');
  }
  if (e.MONGO_URL !== undefined && !/^mongodb(\+srv)?:\/\//.test(e.MONGO_URL)) {
    throw new ConfigError('MONGO_URL must start with mongodb:// or mongodb+srv://');
  }
  if (e.HTTP_REQUEST_TIMEOUT_MS < e.HTTP_HEADERS_TIMEOUT_MS) {
    throw new ConfigError('HTTP_REQUEST_TIMEOUT_MS must not be shorter than HTTP_HEADERS_TIMEOUT_MS');
  }
  if (e.AMQP_URL !== undefined && !/^amqps?:\/\//.test(e.AMQP_URL)) {
    throw new ConfigError('AMQP_URL must be an amqp:// or amqps:// URL');
  }
  if (e.NATS_URL !== undefined && !/^(nats|tls):\/\//.test(e.NATS_URL)) {
    throw new ConfigError('NATS_URL must be a nats:// or tls:// URL');
  }
  if (!/^[A-Za-z0-9_-]{1,64}$/.test(e.NATS_STREAM)) {
    throw new ConfigError('NATS_STREAM: use 1 to 64 letters, digits, dashes or underscores');
  }
  if (e.WEBHOOK_LEASE_MS <= e.WEBHOOK_TIMEOUT_MS) {
    throw new ConfigError('WEBHOOK_LEASE_MS must be greater than WEBHOOK_TIMEOUT_MS');
  }
  if (e.BILLING_TICK !== undefined && (e.BILLING_TICK.months > 0 || e.BILLING_TICK.ms <= 0)) {
    throw new ConfigError('BILLING_TICK must be a fixed duration (ms, s, m, h, d), not months');
  }
  // An interval replaces the cron expression: setting both would leave one silently ignored.
  if (e.BILLING_TICK !== undefined && e.BILLING_CRON !== undefined) {
    throw new ConfigError('Set BILLING_CRON or BILLING_TICK, not both');
  }
  if (e.BILLING_CRON !== undefined && !validCron(e.BILLING_CRON)) {
    throw new ConfigError(
      `BILLING_CRON must be a cron expression (5 fields, or 6 with seconds first), got "${e.BILLING_CRON}"`,
    );
  }
  if (e.NODE_TIMEOUT_MS <= e.HEARTBEAT_MS) throw new ConfigError('NODE_TIMEOUT_MS must be greater than HEARTBEAT_MS');
  if (e.NODE_ID !== undefined && !/^[A-Za-z0-9._-]{1,64}$/.test(e.NODE_ID)) {
    throw new ConfigError('NODE_ID must be 1 to 64 letters, digits, dots, dashes or underscores');
  }
  if (e.PUBLIC_BASE_URL !== undefined && !/^https?:\/\/[^/]+/.test(e.PUBLIC_BASE_URL)) {
    throw new ConfigError('PUBLIC_BASE_URL must be an http(s) URL');
  }
  for (const [name, d] of [
    ['MEDIA_BLOB_TTL', e.MEDIA_BLOB_TTL],
    ['S3_URL_EXPIRY', e.S3_URL_EXPIRY],
  ] as const) {
    if (d.months > 0) throw new ConfigError(`${name} must be a fixed duration (s, m, h, d), not months`);
  }
  if (e.S3_URL_EXPIRY.ms > 7 * 86_400_000 || e.S3_URL_EXPIRY.ms < 1000) {
    throw new ConfigError('S3_URL_EXPIRY must be from 1s to 7d (the longest a presigned URL may live)');
  }
  const encryptionKey = e.ENCRYPTION_KEY === undefined ? undefined : parseKey(e.ENCRYPTION_KEY);
  if (!embedded && encryptionKey === undefined) {
    throw new ConfigError('ENCRYPTION_KEY is required when REDIS_URL or MONGO_URL is set (nodes must share one key)');
  }
  return {
    port: e.PORT,
    host: e.HOST ?? (embedded ? '127.0.0.1' : '0.0.0.0'),
    dataDir: e.DATA_DIR,
    redisUrls: e.REDIS_URL,
    redisMode: e.REDIS_MODE,
    redisSentinelMaster: e.REDIS_SENTINEL_MASTER,
    redisConnectTimeoutMs: e.REDIS_CONNECT_TIMEOUT_MS,
    mongoUrl: e.MONGO_URL,
    mongoDb: e.MONGO_DB,
    mongoConnectTimeoutMs: e.MONGO_CONNECT_TIMEOUT_MS,
    mongoServerSelectionTimeoutMs: e.MONGO_SERVER_SELECTION_TIMEOUT_MS,
    sqliteBusyTimeoutMs: e.SQLITE_BUSY_TIMEOUT_MS,
    sqliteSynchronous: e.SQLITE_SYNCHRONOUS,
    adminToken: e.ADMIN_TOKEN,
    metricsToken: e.METRICS_TOKEN,
    encryptionKey,
    msgnetDriver: e.MSGNET_DRIVER,
    connectRatePerSecond: e.CONNECT_RATE_PER_SECOND,
    connectMaxLoopDelayMs: e.CONNECT_MAX_LOOP_DELAY_MS,
    whatsapp: parseWhatsAppEndpoint(
      {
        wsUrl: e.WHATSAPP_WS_URL,
        certRoot: e.WHATSAPP_CERT_ROOT,
        mediaCa: e.WHATSAPP_MEDIA_CA,
        driver: e.MSGNET_DRIVER,
      },
      (message) => {
        throw new ConfigError(message);
      },
    ),
    allowedWsOrigins: e.ALLOWED_WS_ORIGINS,
    websocket: {
      pingIntervalMs: e.WS_PING_INTERVAL_MS,
      pongTimeoutMs: e.WS_PONG_TIMEOUT_MS,
      maxBufferedBytes: e.WS_MAX_BUFFERED_BYTES,
      configRefreshMs: e.WS_CONFIG_REFRESH_MS,
    },
    tls: e.TLS_CERT_FILE && e.TLS_KEY_FILE ? { certFile: e.TLS_CERT_FILE, keyFile: e.TLS_KEY_FILE } : undefined,
    trustProxy: e.TRUST_PROXY,
    allowInsecureHttp: e.ALLOW_INSECURE_HTTP,
    allowPrivateUrls: e.ALLOW_PRIVATE_URLS,
    logLevel: e.LOG_LEVEL,
    publicBaseUrl: e.PUBLIC_BASE_URL?.replace(/\/+$/, ''),
    defaultInstanceQuota: e.DEFAULT_INSTANCE_QUOTA,
    rateLimitPerMinute: e.RATE_LIMIT_PER_MINUTE,
    rateLimitCreatePerMinute: e.RATE_LIMIT_CREATE_PER_MINUTE,
    maxBodyBytes: e.MAX_BODY_BYTES,
    httpTimeouts: { headersMs: e.HTTP_HEADERS_TIMEOUT_MS, requestMs: e.HTTP_REQUEST_TIMEOUT_MS },
    media: {
      allowPrivateUrls: e.ALLOW_PRIVATE_URLS,
      maxBytes: e.MEDIA_MAX_BYTES,
      fetchTimeoutMs: e.MEDIA_FETCH_TIMEOUT_MS,
      ffmpegPath: e.FFMPEG_PATH,
      ffprobePath: e.FFPROBE_PATH,
    },
    messageRetentionDays: e.MESSAGE_RETENTION_DAYS,
    receivedMedia: {
      blobTtlMs: e.MEDIA_BLOB_TTL.ms,
      urlExpirySeconds: Math.floor(e.S3_URL_EXPIRY.ms / 1000),
      publicUrls: e.S3_PUBLIC_URLS,
      storageTimeoutMs: e.S3_TIMEOUT_MS,
    },
    nodeId: e.NODE_ID,
    embedded,
    cluster: {
      leaseTtlMs: e.LEASE_TTL_MS,
      rateLimitBatchMs: e.RATE_LIMIT_BATCH_MS,
      heartbeatMs: e.HEARTBEAT_MS,
      nodeTimeoutMs: e.NODE_TIMEOUT_MS,
      reconcileMs: e.RECONCILE_MS,
      handoffMoves: e.HANDOFF_MOVES,
      handoffWindowMs: e.HANDOFF_WINDOW_MS,
      actorMaxQueue: e.ACTOR_MAX_QUEUE,
      callTimeoutMs: e.CALL_TIMEOUT_MS,
      drainTimeoutMs: e.DRAIN_TIMEOUT_MS,
    },
    webhooks: {
      maxAttempts: e.WEBHOOK_MAX_ATTEMPTS,
      retryBaseMs: e.WEBHOOK_RETRY_BASE_MS,
      retryMaxMs: e.WEBHOOK_RETRY_MAX_MS,
      timeoutMs: e.WEBHOOK_TIMEOUT_MS,
      concurrency: e.WEBHOOK_CONCURRENCY,
      leaseMs: e.WEBHOOK_LEASE_MS,
      amqp: e.AMQP_URL === undefined ? undefined : { url: e.AMQP_URL, exchange: e.AMQP_EXCHANGE },
      nats:
        e.NATS_URL === undefined
          ? undefined
          : {
              url: e.NATS_URL,
              stream: e.NATS_STREAM,
              maxAgeMs: e.NATS_STREAM_MAX_AGE_MS,
              maxBytes: e.NATS_STREAM_MAX_BYTES,
            },
    },
    billing: {
      trial: e.BILLING_TRIAL,
      trialNotice: e.BILLING_TRIAL_NOTICE,
      cycle: e.BILLING_CYCLE,
      baseCents: e.BILLING_BASE_CENTS,
      instanceMonthlyCents: e.BILLING_INSTANCE_MONTHLY_CENTS,
      cron: e.BILLING_CRON ?? DEFAULT_BILLING_CRON,
      tickMs: e.BILLING_TICK?.ms,
    },
    helpdesk: {
      enabled: e.HELPDESK_ENABLED,
      timeoutMs: e.HELPDESK_TIMEOUT_MS,
      retries: e.HELPDESK_RETRIES,
      errorAfter: e.HELPDESK_ERROR_AFTER,
      retryIntervalMs: e.HELPDESK_RETRY_INTERVAL_MS,
      webhookRatePerMinute: e.HELPDESK_WEBHOOK_RATE_PER_MINUTE,
    },
    chatbot: { enabled: e.CHATBOT_ENABLED, timeoutMs: e.CHATBOT_TIMEOUT_MS },
    testProbe: e.TEST_PROBE_FILE ? { file: e.TEST_PROBE_FILE, writeIntervalMs: e.TEST_PROBE_WRITE_MS } : undefined,
  };
}
