import type { CacheStore, PossiblyExtendedCacheStore, UserFacingSocketConfig } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { InstanceSettings } from '../../store/records.js';
import type { BaileysAuth } from './baileys-auth-state.js';
import type { NetworkAcks } from './network-acks.js';
import type { NetworkEndpoint } from './network-endpoint.js';
import type { ProxyAgents } from './proxy-agents.js';
import type { SentMessages } from './sent-messages.js';
import type { TtlCache } from './ttl-cache.js';

/** Caches shared by every socket of the driver (each socket would otherwise start its own, with timers). */
export interface SharedCaches {
  msgRetryCounterCache: CacheStore;
  userDevicesCache: PossiblyExtendedCacheStore;
  callOfferCache: CacheStore;
  /** Messages whose placeholder resend was asked (Baileys' own is a NodeCache with a timer per socket). */
  placeholderResendCache: CacheStore;
}

export interface SocketConfigInput {
  auth: BaileysAuth;
  /** False once this socket ended: its key writes are refused (BaileysAuth.stateWhile). @default always */
  alive?: () => boolean;
  log: Logger;
  settings: InstanceSettings;
  /** Days of history a new link asked for (overrides `disableHistorySync`); undefined: the setting decides. */
  historyDays: number | undefined;
  caches: SharedCaches;
  groupCache: TtlCache;
  proxy: ProxyAgents | undefined;
  /** A simulator instead of WhatsApp; undefined = WhatsApp. */
  endpoint: NetworkEndpoint | undefined;
  /** Where Baileys hands the receipts and call acks the owner sends once it has stored their events. */
  acks: NetworkAcks;
  /** The messages this session sent, for the retry receipts that reach a socket other than the sender. */
  sent: SentMessages;
  /** The owner's epoch, named to a simulator's observer (never sent to WhatsApp). */
  epoch: number | undefined;
  /** Throws once this node may no longer act for the instance: checked before every frame (patches/). */
  assertMayAct: (() => void) | undefined;
}

/** One commit per key transaction (see `socketConfig`). */
export const KEY_TRANSACTION_OPTS = { maxCommitRetries: 1, delayBetweenTriesMs: 0 };

/** The `makeWASocket` config of one socket. */
export function socketConfig(input: SocketConfigInput): UserFacingSocketConfig {
  const { proxy, caches, endpoint, acks } = input;
  return {
    auth: input.alive ? input.auth.stateWhile(input.alive) : input.auth.state,
    // A refused key write never succeeds on a retry: the store's failure has ended the socket (onWriteFailed)
    // or its ownership, and an ended socket's writes are refused for good. Baileys' default (10 tries, 3 s
    // apart) held the socket's decryption, and the actor calls behind it, for 27 s.
    transactionOpts: KEY_TRANSACTION_OPTS,
    logger: input.log.child({ component: 'baileys' }),
    // The actor applies `keepOnlineStatus` itself after each connect; Baileys' default would override it.
    markOnlineOnConnect: false,
    // History still syncs (PN↔LID mappings arrive with it); only the full backlog is not requested.
    syncFullHistory: input.historyDays !== undefined ? input.historyDays > 0 : !input.settings.disableHistorySync,
    // Asked for N days: every history chunk is processed (the full one too), and socket-events drops what is older.
    ...(input.historyDays ? { shouldSyncHistoryMessage: () => true } : {}),
    msgRetryCounterCache: caches.msgRetryCounterCache,
    userDevicesCache: caches.userDevicesCache,
    callOfferCache: caches.callOfferCache,
    placeholderResendCache: caches.placeholderResendCache,
    cachedGroupMetadata: async (jid) => input.groupCache.get(jid),
    // A retry receipt for a message another socket (or node) sent: resent from the stored content.
    getMessage: (key) => input.sent.get(key),
    // WhatsApp forgets a message at its receipt: it goes once the owner has durably queued the event (patches/).
    deferMessageReceipt: (message, send) => acks.deferMessage(message, send),
    deferCallAck: (call, ack) => acks.defer(call.id, ack),
    ...(input.assertMayAct ? { beforeWrite: input.assertMayAct } : {}),
    ...(endpoint
      ? {
          waWebSocketUrl: endpoint.wsUrl,
          fetchAgent: endpoint.fetchAgent,
          options: endpoint.labelled(input.epoch),
        }
      : {}),
    ...(proxy ? { agent: proxy.agent, fetchAgent: proxy.fetchAgent, options: proxy.fetchOptions } : {}),
  };
}
