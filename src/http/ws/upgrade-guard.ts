import { STATUS_CODES, ServerResponse } from 'node:http';
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import Koa from 'koa';
import type { Logger } from 'pino';
import type { RateLimiter } from '../../cluster/rate-limiter.js';
import { AuthError, ForbiddenError, NotFoundError, ValidationError } from '../../errors.js';
import type { AccountRecord, InstanceRecord } from '../../store/records.js';
import type { Store } from '../../store/store.js';
import { startRequest } from '../app-state.js';
import type { AppContext, AppState } from '../app-state.js';
import { AuthMessage, resolvePresented } from '../auth.js';
import type { Authenticator } from '../auth.js';
import { errorEnvelope } from '../error-envelope.js';
import { rateLimit } from '../rate-limit.js';

/**
 * Everything a WebSocket upgrade must pass before the 101 (spec sections 4.10, 5, 7), checked on a Koa
 * context built from the upgrade request, so that the token forms, the rate-limit bucket, the error
 * envelope and the proxy rules (`ctx.secure`, `ctx.host`, `ctx.ip` with TRUST_PROXY) are exactly those of
 * the HTTP API. In order:
 *
 * 1. rate limit: the Global bucket of the token (of the client address without a valid token) — 429;
 * 2. HTTPS, where the node requires it — 403 `HTTPS is required`;
 * 3. token and ownership, as `requireInstance` decides them — 401/403 (404 for an unknown name);
 * 4. origin: a request with an `Origin` must be same-origin or in ALLOWED_WS_ORIGINS — 403, empty body;
 * 5. the instance's WebSocket configuration is enabled — 400.
 *
 * The account's CORS origins (`allowedOrigins`) do not apply here: WebSockets follow ALLOWED_WS_ORIGINS.
 */

export const WsMessage = {
  /** Followed by the instance's name, as the hosted product words it. */
  NotEnabled: 'WebSocket is not enabled for this instance. Configure it first using POST /api/events/websocket/',
  HttpsRequired: 'HTTPS is required',
  NotFound: 'Not found',
  ShuttingDown: 'Server is shutting down',
  Unavailable: 'WebSocket events are unavailable; try again',
} as const;

export interface UpgradeGuardOptions {
  store: Store;
  auth: Authenticator;
  rateLimiter: RateLimiter;
  logger: Logger;
  /** The node refuses plain HTTP (same condition as the HTTP API's `httpsOnly`). */
  requireHttps: boolean;
  /** Honour X-Forwarded-Proto/Host/For from a trusted proxy (TRUST_PROXY). */
  trustProxy: boolean;
  /** ALLOWED_WS_ORIGINS. */
  allowedOrigins: readonly string[];
  rateLimitPerMinute: number;
}

/** A plain HTTP answer to an upgrade request that is refused. `body` undefined = empty body. */
export interface Refusal {
  status: number;
  headers: Record<string, string>;
  body: string | undefined;
}

type Verdict<T extends object> = ({ ok: true; headers: Record<string, string> } & T) | ({ ok: false } & Refusal);

/** How a socket authenticated: re-checked while it stays open, so that a revoked token closes it. */
export interface SocketCredential {
  kind: 'account' | 'instance';
  tokenHash: string;
}

export type UpgradeVerdict = Verdict<{ instance: InstanceRecord; credential: SocketCredential }>;
/** The console stream's verdict: the TokenAccount's account. */
export type AccountVerdict = Verdict<{ account: AccountRecord }>;

/** `scheme://host[:port]` in canonical form (lower case, default port dropped), or the raw text lower-cased. */
export function normalizeOrigin(origin: string): string {
  const trimmed = origin.trim().replace(/\/+$/, '');
  try {
    const url = new URL(trimmed);
    if (url.origin !== 'null') return url.origin.toLowerCase();
  } catch {
    // Not a URL (e.g. the literal `null` of sandboxed frames): compared as written.
  }
  return trimmed.toLowerCase();
}

/** The `:instance` of `/ws/:instance`, or undefined when the path is not a WebSocket path. */
export function wsInstanceName(rawUrl: string | undefined): string | undefined {
  let pathname: string;
  try {
    pathname = new URL(rawUrl ?? '/', 'http://localhost').pathname;
  } catch {
    return undefined;
  }
  const m = /^\/ws\/([^/]+)\/?$/.exec(pathname);
  if (!m?.[1]) return undefined;
  try {
    return decodeURIComponent(m[1]);
  } catch {
    return undefined;
  }
}

export function jsonError(message: string, code?: string): string {
  return JSON.stringify({ success: false, error: { message, ...(code ? { code } : {}) } });
}

/**
 * Writes a complete HTTP/1.1 response on the raw socket of an upgrade request and closes it. The body,
 * when given, is a JSON error envelope.
 */
export function refuseUpgrade(socket: Duplex, refusal: Refusal): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const body = refusal.body ?? '';
  const lines = [`HTTP/1.1 ${refusal.status} ${STATUS_CODES[refusal.status] ?? ''}`, 'Connection: close'];
  for (const [name, value] of Object.entries(refusal.headers)) lines.push(`${name}: ${value}`);
  if (refusal.body !== undefined) lines.push('Content-Type: application/json; charset=utf-8');
  lines.push(`Content-Length: ${Buffer.byteLength(body)}`);
  socket.once('finish', () => socket.destroy());
  socket.end(`${lines.join('\r\n')}\r\n\r\n${body}`);
}

/** The headers a refusal (or the 101) carries: the request id and the X-RateLimit-* trio. */
const FORWARDED_HEADERS = ['x-request-id', 'x-ratelimit-limit', 'x-ratelimit-remaining', 'x-ratelimit-reset'];
const HEADER_NAMES: Record<string, string> = {
  'x-request-id': 'X-Request-Id',
  'x-ratelimit-limit': 'X-RateLimit-Limit',
  'x-ratelimit-remaining': 'X-RateLimit-Remaining',
  'x-ratelimit-reset': 'X-RateLimit-Reset',
};

export class UpgradeGuard {
  readonly #koa: Koa<AppState>;
  readonly #limit: ReturnType<typeof rateLimit>;
  readonly #origins: ReadonlySet<string>;

  constructor(private readonly options: UpgradeGuardOptions) {
    this.#koa = new Koa<AppState>({ proxy: options.trustProxy });
    // The upgrade counts against the Global limit: the HTTP API's own middleware, with its bucket rules.
    this.#limit = rateLimit(options.rateLimiter, options.auth, {
      perMinute: options.rateLimitPerMinute,
      createPerMinute: options.rateLimitPerMinute,
    });
    this.#origins = new Set(options.allowedOrigins.map(normalizeOrigin));
  }

  /** Runs every check of an upgrade request for instance `name`. Never throws for a client error. */
  async check(req: IncomingMessage, name: string): Promise<UpgradeVerdict> {
    return this.#run(req, async (ctx) => {
      const instance = await this.#authorize(ctx, name);
      if (!this.originAllowed(ctx)) return 'origin-blocked';
      if (!instance.config.websocket?.enabled) throw new ValidationError(`${WsMessage.NotEnabled}${instance.name}`);
      const { tokenHash, principal } = ctx.state.presented!;
      const kind = principal?.kind === 'instance' ? 'instance' : 'account';
      return { instance, credential: { kind, tokenHash: tokenHash! } };
    });
  }

  /**
   * The operator console's account stream: the same rate limit, HTTPS and origin rules, but a TokenAccount
   * is required (no instance in the path, and no per-instance WebSocket configuration to check).
   */
  async checkAccount(req: IncomingMessage): Promise<AccountVerdict> {
    return this.#run(req, async (ctx) => {
      const { token, principal } = await resolvePresented(ctx, this.options.auth);
      if (token === undefined) throw new AuthError(AuthMessage.Missing);
      if (!principal) throw new AuthError(AuthMessage.Invalid);
      if (principal.kind !== 'account') throw new ForbiddenError(AuthMessage.AccountTokenRequired);
      ctx.state.principal = principal;
      if (!this.originAllowed(ctx)) return 'origin-blocked';
      return { account: principal.account };
    });
  }

  /**
   * Builds a Koa context for the upgrade request and runs `decide` inside the rate limit, the HTTPS check
   * and the error envelope; a thrown AppError becomes the refusal's status and body.
   */
  #run<T extends object>(
    req: IncomingMessage,
    decide: (ctx: AppContext) => Promise<T | 'origin-blocked'>,
  ): Promise<Verdict<T>> {
    const ctx = this.#koa.createContext(req, new ServerResponse(req)) as AppContext;
    startRequest(ctx, this.options.logger).upgrade = true;
    return this.#decide(ctx, decide);
  }

  async #decide<T extends object>(
    ctx: AppContext,
    decide: (ctx: AppContext) => Promise<T | 'origin-blocked'>,
  ): Promise<Verdict<T>> {
    let accepted: T | undefined;
    let originBlocked = false;
    await errorEnvelope(ctx, () =>
      this.#limit(ctx, async () => {
        if (this.options.requireHttps && !ctx.secure) throw new ForbiddenError(WsMessage.HttpsRequired);
        const outcome = await decide(ctx);
        if (outcome === 'origin-blocked') originBlocked = true;
        else accepted = outcome;
      }),
    );

    const headers: Record<string, string> = {};
    for (const h of FORWARDED_HEADERS) {
      const value = ctx.response.get(h);
      if (value) headers[HEADER_NAMES[h]!] = value;
    }
    if (accepted) return { ok: true, ...accepted, headers };
    if (originBlocked) {
      ctx.state.log.debug({ origin: ctx.get('origin'), path: ctx.path }, 'websocket origin refused');
      return { ok: false, status: 403, headers, body: undefined };
    }
    return { ok: false, status: ctx.status, headers, body: JSON.stringify(ctx.body) };
  }

  /** No `Origin` (not a browser): accepted. Otherwise same-origin or listed in ALLOWED_WS_ORIGINS. */
  originAllowed(ctx: AppContext): boolean {
    const raw = ctx.get('origin');
    if (!raw.trim()) return true;
    const origin = normalizeOrigin(raw);
    if (origin === normalizeOrigin(`${ctx.protocol}://${ctx.host}`)) return true;
    return this.#origins.has(origin);
  }

  /** `requireInstance`'s decisions (spec section 7), without the account CORS check. */
  async #authorize(ctx: AppContext, name: string): Promise<InstanceRecord> {
    const { token, principal } = await resolvePresented(ctx, this.options.auth);
    if (token === undefined) throw new AuthError(AuthMessage.Missing);
    if (!principal) throw new AuthError(AuthMessage.Invalid);
    if (principal.kind === 'global') throw new ForbiddenError(AuthMessage.InstanceTokenRequired);
    ctx.state.principal = principal;
    const { store } = this.options;
    if (principal.kind === 'instance') {
      if (principal.instance.name === name) return principal.instance;
      if (await store.instances.findByName(principal.account.id, name)) {
        throw new ForbiddenError(AuthMessage.InstanceMismatch);
      }
      throw new AuthError(AuthMessage.InvalidInstance);
    }
    const instance = await store.instances.findByName(principal.account.id, name);
    if (instance) return instance;
    if (await store.instances.nameExists(name)) throw new ForbiddenError(AuthMessage.OtherAccount);
    throw new NotFoundError('Instance not found');
  }
}
