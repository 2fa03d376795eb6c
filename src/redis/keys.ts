/**
 * Every Redis key and channel name of Switchboard, built here and nowhere else. On a Redis Cluster a
 * script, a MULTI or an MGET must touch one slot: the `{…}` hash tags put such keys together. Every lease
 * (a few per node) shares `{leases}` with the incarnation record that guards them; the whole webhook
 * queue (stream, retries, dead letters) shares `{webhooks}`, so one master serves it. Keys that no script
 * combines keep their names (a rolling upgrade keeps reading them); the few commands over several of them
 * go through `multi-slot.ts`.
 */
const P = 'sb';

export const keys = {
  /** The lease of a resource (`node:<nodeId>`, or `singleton:<name>`). Value: the holder's random token. */
  lease: (resource: string) => `${P}:lease:{leases}:${resource}`,
  /** The Redis incarnation the leases live in: `<run_id>:<ms when first seen>` (runLease-2.lua). */
  incarnation: () => `${P}:incarnation:{leases}`,
  /** Where the owner of an instance runs, for routing: `<nodeId>`. A hint: the store decides ownership. */
  owner: (instanceId: string) => `${P}:owner:{${instanceId}}`,
  /** A node's heartbeat record (JSON NodeInfo) with a TTL of the membership timeout. */
  node: (nodeId: string) => `${P}:node:${nodeId}`,
  /** Sorted set of node ids scored by the time their heartbeat expires (ms). */
  nodes: () => `${P}:nodes`,
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
