/**
 * Every Redis key and channel name of Switchboard, built here and nowhere else. The `{…}` hash tags keep
 * a lease and its owner key in one slot, should the keys ever live on a Redis Cluster.
 */
const P = 'sb';

export const keys = {
  /** The redlock lease of a resource (an instance id, or `singleton:<name>`). Value: the lease's random token. */
  lease: (resource: string) => `${P}:lease:{${resource}}`,
  /** Which node holds the lease of a resource: `<nodeId>`, same TTL as the lease. */
  owner: (resource: string) => `${P}:owner:{${resource}}`,
  /** A node's heartbeat record (JSON NodeInfo) with a TTL of the membership timeout. */
  node: (nodeId: string) => `${P}:node:${nodeId}`,
  /** Sorted set of node ids scored by the time their heartbeat expires (ms). */
  nodes: () => `${P}:nodes`,
  /** The webhook delivery stream, read by every node through one consumer group. */
  webhookStream: () => `${P}:webhooks`,
  /** Deliveries waiting for a retry, scored by the time they are due (ms). */
  webhookRetries: () => `${P}:webhooks:retry`,
  /** One instance's dead letters, newest first. */
  webhookDead: (instanceId: string) => `${P}:webhooks:dead:${instanceId}`,
  /** A received file (raw bytes) kept for base64 deliveries and catch-up, with a TTL of MEDIA_BLOB_TTL. */
  mediaBlob: (instanceId: string, messageId: string) => `${P}:media:${instanceId}:${messageId}`,
  /** Fixed-window counter of a rate-limit bucket. */
  rate: (bucket: string) => `${P}:rate:${bucket}`,
} as const;

export const channels = {
  /** Calls routed to one node's actors. */
  inbox: (nodeId: string) => `${P}:inbox:${nodeId}`,
  /** Replies to calls that one node routed. */
  reply: (nodeId: string) => `${P}:reply:${nodeId}`,
  /** Events of one instance, for WebSocket fan-out on every node. */
  events: (instanceId: string) => `${P}:events:${instanceId}`,
  /** The simulated network: what reaches one sandbox number (messages, receipts, calls). */
  sandboxNumber: (numberJid: string) => `${P}:sandbox:${numberJid}`,
  /** Credential changes (a token rotated, an account disabled or deleted), for every node at once. */
  credentials: () => `${P}:credentials`,
  /** Instance record changes (settings, configuration, connection, token, deletion), for every node's cache. */
  instanceRecords: () => `${P}:instance-records`,
  /** Membership news (a node leaving) so that peers need not wait for a heartbeat to expire. */
  cluster: () => `${P}:cluster`,
} as const;
