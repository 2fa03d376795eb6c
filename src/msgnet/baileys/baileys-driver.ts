import { makeWASocket } from '@whiskeysockets/baileys';
import type { WhatsAppEndpointConfig } from '../../config/whatsapp-endpoint.js';
import type { DriverStats, MsgNetDriver, MsgNetSession, ProxySettings, SessionOptions } from '../msgnet-driver.js';
import { BaileysSession } from './baileys-session.js';
import type { BaileysSessionDeps } from './connection-manager.js';
import type { BackoffOptions } from './disconnect-policy.js';
import type { MediaDownloader } from './media-download.js';
import { simulatorEndpoint } from './network-endpoint.js';
import type { NetworkEndpoint } from './network-endpoint.js';
import { buildProxyAgents } from './proxy-agents.js';
import type { ProxyAgents } from './proxy-agents.js';
import type { SharedCaches } from './socket-config.js';
import type { SocketFactory } from './socket-port.js';
import { TtlCache } from './ttl-cache.js';
import { ConnectPacer } from '../connect-pacer.js';
import type { Clock } from '../../util/clock.js';

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
  /** A WhatsApp simulator instead of WhatsApp (WHATSAPP_WS_URL), and the node label its observer records. */
  simulator?: { config: WhatsAppEndpointConfig; nodeLabel: string };
  /** Reconnect delays and link deadlines run on it. @default systemClock (tests pass a manual one) */
  clock?: Clock;
  /** Logins per second at most, for every session of the driver (CONNECT_RATE_PER_SECOND); unset = unpaced. */
  connectRatePerSecond?: number;
  /** True while the node is too busy for another login: the pacer holds logins back (see ConnectPacer). */
  overloaded?: () => boolean;
}

/** TTLs follow Baileys' own defaults for these caches (Defaults/index.ts). */
function sharedCaches(): { [K in keyof SharedCaches]: TtlCache } {
  return {
    msgRetryCounterCache: new TtlCache({ ttlMs: 60 * 60_000, maxEntries: 100_000 }),
    userDevicesCache: new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 100_000 }),
    callOfferCache: new TtlCache({ ttlMs: 5 * 60_000, maxEntries: 10_000 }),
    // Message ids are random: one map for every socket of the node serves them all.
    placeholderResendCache: new TtlCache({ ttlMs: 60 * 60_000, maxEntries: 10_000 }),
  };
}

/**
 * The Baileys driver: one `BaileysSession` per instance on its owner node, all sharing the retry,
 * device-list, call-offer and placeholder-resend caches (about six caches with timers per socket otherwise).
 */
export class BaileysDriver implements MsgNetDriver {
  readonly name = 'baileys' as const;
  readonly #caches = sharedCaches();
  readonly #sessions = new Set<BaileysSession>();
  readonly #deps: BaileysSessionDeps;
  readonly #endpoint: NetworkEndpoint | undefined;
  /** The node's logins, paced (undefined: each session logs in at once). */
  readonly pacer: ConnectPacer | undefined;

  constructor(options: BaileysDriverOptions = {}) {
    this.#endpoint = options.simulator
      ? simulatorEndpoint(options.simulator.config, options.simulator.nodeLabel)
      : undefined;
    this.pacer = options.connectRatePerSecond
      ? new ConnectPacer({
          ratePerSecond: options.connectRatePerSecond,
          ...(options.clock ? { clock: options.clock } : {}),
          ...(options.random ? { random: options.random } : {}),
          ...(options.overloaded ? { overloaded: options.overloaded } : {}),
        })
      : undefined;
    this.#deps = {
      ...(this.#endpoint ? { endpoint: this.#endpoint } : {}),
      makeSocket: options.makeSocket ?? makeWASocket,
      caches: this.#caches,
      ...(options.backoff ? { backoff: options.backoff } : {}),
      ...(options.random ? { random: options.random } : {}),
      ...(options.linkTimeoutMs ? { linkTimeoutMs: options.linkTimeoutMs } : {}),
      proxyAgents:
        options.proxyAgents ??
        ((proxy) => buildProxyAgents(proxy, { allowPrivate: options.allowPrivateUrls ?? false })),
      ...(options.downloadMedia ? { downloadMedia: options.downloadMedia } : {}),
      ...(options.clock ? { clock: options.clock } : {}),
      ...(this.pacer ? { pacer: this.pacer } : {}),
    };
  }

  async open(options: SessionOptions): Promise<MsgNetSession> {
    // Forgotten once closed, so the set does not grow with every handoff.
    const session: BaileysSession = new BaileysSession(options, this.#deps, () => this.#sessions.delete(session));
    this.#sessions.add(session);
    return session;
  }

  stats(): DriverStats {
    let connected = 0;
    for (const s of this.#sessions) if (s.state === 'connected') connected++;
    return {
      connected,
      loginsWaiting: this.pacer?.waiting ?? 0,
      loginsRefused: this.pacer?.refusals ?? 0,
      loginsHeldBack: this.pacer?.heldBack ?? 0,
    };
  }

  /** Closes sessions still open, then frees the shared caches. */
  async close(): Promise<void> {
    this.pacer?.close();
    await Promise.allSettled([...this.#sessions].map((s) => s.close()));
    this.#sessions.clear();
    for (const cache of Object.values(this.#caches)) cache.flushAll();
    await this.#endpoint?.close();
  }
}
