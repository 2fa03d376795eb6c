import { makeWASocket } from '@whiskeysockets/baileys';
import type { MsgNetDriver, MsgNetSession, ProxySettings, SessionOptions } from '../msgnet-driver.js';
import { BaileysSession } from './baileys-session.js';
import type { BaileysSessionDeps } from './connection-manager.js';
import type { BackoffOptions } from './disconnect-policy.js';
import type { MediaDownloader } from './media-download.js';
import { buildProxyAgents } from './proxy-agents.js';
import type { ProxyAgents } from './proxy-agents.js';
import type { SharedCaches } from './socket-config.js';
import type { SocketFactory } from './socket-port.js';
import { TtlCache } from './ttl-cache.js';

export interface BaileysDriverOptions {
  /** @default makeWASocket (tests pass a fake) */
  makeSocket?: SocketFactory;
  backoff?: BackoffOptions;
  random?: () => number;
  linkTimeoutMs?: number;
  proxyAgents?: (proxy: ProxySettings) => ProxyAgents;
  downloadMedia?: MediaDownloader;
  /** ALLOW_PRIVATE_URLS: proxies on internal networks may be dialled. @default false */
  allowPrivateUrls?: boolean;
}

/** TTLs follow Baileys' own defaults for these caches (Defaults/index.ts). */
function sharedCaches(): { [K in keyof SharedCaches]: TtlCache } {
  return {
    msgRetryCounterCache: new TtlCache({ ttlMs: 60 * 60_000, maxEntries: 100_000 }),
    userDevicesCache: new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 100_000 }),
    callOfferCache: new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 10_000 }),
  };
}

/**
 * The Baileys driver: one `BaileysSession` per instance on its owner node, all sharing the retry,
 * device-list and call-offer caches (about six caches with timers per socket otherwise).
 */
export class BaileysDriver implements MsgNetDriver {
  readonly name = 'baileys' as const;
  readonly #caches = sharedCaches();
  readonly #sessions = new Set<BaileysSession>();
  readonly #deps: BaileysSessionDeps;

  constructor(options: BaileysDriverOptions = {}) {
    this.#deps = {
      makeSocket: options.makeSocket ?? makeWASocket,
      caches: this.#caches,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.linkTimeoutMs ? { linkTimeoutMs: options.linkTimeoutMs } : {}),
      proxyAgents:
        options.proxyAgents ??
        ((proxy) => buildProxyAgents(proxy, { allowPrivate: options.allowPrivateUrls ?? false })),
      ...(options.downloadMedia ? { downloadMedia: options.downloadMedia } : {}),
    };
  }

  async open(options: SessionOptions): Promise<MsgNetSession> {
    // Forgotten once closed, so the set does not grow with every handoff.
    const session: BaileysSession = new BaileysSession(options, this.#deps, () => this.#sessions.delete(session));
    this.#sessions.add(session);
    return session;
  }

  /** Closes sessions still open, then frees the shared caches. */
  async close(): Promise<void> {
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    this.#sessions.clear();
    for (const cache of Object.values(this.#caches)) cache.flushAll();
  }
}
