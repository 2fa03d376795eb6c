import type { CacheStore, PossiblyExtendedCacheStore, UserFacingSocketConfig } from '@whiskeysockets/baileys';
import type { Logger } from 'pino';
import type { InstanceSettings } from '../../store/records.js';
import type { BaileysAuth } from './baileys-auth-state.js';
import type { ProxyAgents } from './proxy-agents.js';
import type { TtlCache } from './ttl-cache.js';

/** Caches shared by every socket of the driver (each socket would otherwise start its own, with timers). */
export interface SharedCaches {
  msgRetryCounterCache: CacheStore;
  userDevicesCache: PossiblyExtendedCacheStore;
  callOfferCache: CacheStore;
}

export interface SocketConfigInput {
  auth: BaileysAuth;
  log: Logger;
  settings: InstanceSettings;
  caches: SharedCaches;
  groupCache: TtlCache;
  proxy: ProxyAgents | undefined;
}

/** The `makeWASocket` config of one socket. */
export function socketConfig(input: SocketConfigInput): UserFacingSocketConfig {
  const { proxy, caches } = input;
  return {
    auth: input.auth.state,
    logger: input.log.child({ component: 'baileys' }),
    // The actor applies `keepOnlineStatus` itself after each connect; Baileys' default would override it.
    markOnlineOnConnect: false,
    // History still syncs (PN↔LID mappings arrive with it); only the full backlog is not requested.
    syncFullHistory: !input.settings.disableHistorySync,
    msgRetryCounterCache: caches.msgRetryCounterCache,
    userDevicesCache: caches.userDevicesCache,
    callOfferCache: caches.callOfferCache,
    cachedGroupMetadata: async (jid) => input.groupCache.get(jid),
    ...(proxy ? { agent: proxy.agent, fetchAgent: proxy.fetchAgent, options: proxy.fetchOptions } : {}),
  };
}
