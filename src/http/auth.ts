import type { Next } from 'koa';
import { AuthError, ForbiddenError, NotFoundError, ValidationError } from '../errors.js';
import { hashBytes, hashToken, safeEqual, sameHash } from '../security/tokens.js';
import type { CredentialChange } from '../events/credential-news.js';
import type { AccountRecord, InstanceRecord } from '../store/records.js';
import { BoundedMap } from '../util/bounded-map.js';
import type { InstanceRepository, Store } from '../store/store.js';
import type { AppContext, PresentedState, Principal } from './app-state.js';
import { checkAccountOrigin } from './cors.js';

/**
 * Authentication and ownership (spec section 5). The token is taken from, in order: header `token`,
 * `Authorization: Bearer …`, and — on WebSocket upgrades only, as the spec intends it for browsers — query
 * `token`. A token in a URL ends up in proxy and access logs, so plain HTTP refuses it, and the global token
 * is never recognised there. Ownership is checked before every operation.
 */

export const AuthMessage = {
  MissingHeader: 'Missing token in header',
  Missing: 'Missing token in header, Authorization header, or query parameter',
  Invalid: 'Invalid token',
  InvalidInstance: 'Invalid instance token',
  InstanceMismatch: 'Instance token does not match requested instance',
  OtherAccount: 'Instance does not belong to your account',
  AccountTokenRequired: 'This operation requires an account token',
  GlobalTokenRequired: 'This operation requires the global token',
  InstanceTokenRequired: 'An account or instance token is required',
  AccountParamRequired: 'account query parameter is required with the global token',
  OtherAccountParam: 'Account token does not match requested account',
  AccountNotFound: 'Account not found',
  QueryToken:
    'A token in the query string is accepted only on WebSocket upgrades: send it in the token header (or Authorization: Bearer)',
} as const;

/** A token as the request presents it; `fromUrl` when it came from `?token=` (WebSocket upgrades only). */
export interface PresentedToken {
  value: string;
  fromUrl: boolean;
}

/**
 * The presented token, or undefined: header `token`, else `Authorization: Bearer`, else — only when the
 * request is a WebSocket upgrade (`ctx.state.upgrade`) — query `token`.
 */
export function presentedToken(ctx: AppContext): PresentedToken | undefined {
  const header = ctx.get('token').trim();
  if (header) return { value: header, fromUrl: false };
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(ctx.get('authorization'));
  if (bearer?.[1]) return { value: bearer[1], fromUrl: false };
  if (!ctx.state.upgrade) return undefined;
  const value = queryToken(ctx);
  return value === undefined ? undefined : { value, fromUrl: true };
}

function queryToken(ctx: AppContext): string | undefined {
  const query = ctx.query.token;
  const value = Array.isArray(query) ? query[0] : query;
  return value?.trim() || undefined;
}

/**
 * Who may call an endpoint, as the OpenAPI document describes it:
 * - `global`: the global token, in a header; `metrics`: METRICS_TOKEN or the global token, in a header;
 * - `account`: a TokenAccount; `account-or-instance`: a TokenAccount or a TokenInstance;
 * - `instance`: a TokenAccount owning the path's instance, or that instance's TokenInstance;
 * - `instance-account`: only a TokenAccount owning the path's instance;
 * - `account-scope`: a TokenAccount, or the global token naming the account with `?account=`.
 */
export type Access =
  'global' | 'metrics' | 'account' | 'account-or-instance' | 'instance' | 'instance-account' | 'account-scope';

/** A route guard: authenticates and authorises, then calls `next`; `access` names what it accepts. */
export type Guard = ((ctx: AppContext & { params: Record<string, string> }, next: Next) => Promise<void>) & {
  readonly access: Access;
};

function guard(
  access: Access,
  fn: (ctx: AppContext & { params: Record<string, string> }, next: Next) => Promise<void>,
): Guard {
  return Object.assign(fn, { access });
}

/** Where the edge reads the instance records a request names: the store, or a cache in front of it. */
export type InstanceRecords = Pick<InstanceRepository, 'findById' | 'findByName'>;

export interface Authenticator {
  /** Where guards read the path's instance. */
  readonly records: InstanceRecords;
  /**
   * Who the token is; a token `fromUrl` is never the global token (it must not travel in URLs). `hash`
   * is the token's `hashToken`, when the caller has it already.
   */
  resolve(token: string, fromUrl?: boolean, hash?: string): Promise<Principal | undefined>;
}

/** How long a resolved token is trusted without the store: the bound of a revocation whose news was lost. */
export const TOKEN_CACHE_TTL_MS = 1000;
const TOKEN_CACHE_ENTRIES = 10_000;

/** What the cache keeps of a token: an account as it was read, or only which instance (re-read each time). */
type CachedToken =
  | { kind: 'account'; account: AccountRecord; at: number }
  | { kind: 'instance'; account: AccountRecord; instanceId: string; at: number };

/**
 * Resolves tokens through the store, with a small cache (token hash → who) that a credential change
 * (rotation, disabling, deletion, told by CredentialNews on every node) empties of that account or instance
 * at once, and whose entries expire after TOKEN_CACHE_TTL_MS in case the news is lost. An instance token
 * checks its instance's record on every request, read from `records`: with the store itself, a deleted
 * instance or a rotated token is refused at once; with the node's InstanceRecordCache, at once on the node
 * that made the change and on the others as soon as its news arrives (within the cache's TTL if it is lost).
 */
export class CachingAuthenticator implements Authenticator {
  readonly #cache = new BoundedMap<string, CachedToken>(TOKEN_CACHE_ENTRIES);
  /** The global token's hash: a request's token is hashed once, then compared with it in constant time. */
  readonly #adminHash: Buffer | undefined;

  constructor(
    private readonly store: Store,
    adminToken: string | undefined,
    private readonly ttlMs = TOKEN_CACHE_TTL_MS,
    private readonly now: () => number = Date.now,
    readonly records: InstanceRecords = store.instances,
  ) {
    this.#adminHash = adminToken === undefined ? undefined : hashBytes(hashToken(adminToken));
  }

  /** Drops what the cache knows of a changed account or instance. */
  forget(change: CredentialChange): void {
    for (const [hash, entry] of this.#cache) {
      const hit =
        'accountId' in change
          ? entry.account.id === change.accountId
          : entry.kind === 'instance' && entry.instanceId === change.instanceId;
      if (hit) this.#cache.delete(hash);
    }
  }

  async resolve(token: string, fromUrl = false, hash = hashToken(token)): Promise<Principal | undefined> {
    if (!fromUrl && this.#adminHash !== undefined && sameHash(hash, this.#adminHash)) return { kind: 'global' };
    const cached = this.#cache.get(hash);
    if (cached && this.now() - cached.at < this.ttlMs) {
      if (cached.kind === 'account') {
        return cached.account.disabledAt ? undefined : { kind: 'account', account: cached.account };
      }
      const instance = await this.records.findById(cached.instanceId);
      if (instance?.tokenHash === hash && instance.accountId === cached.account.id) {
        return { kind: 'instance', account: cached.account, instance };
      }
      this.#cache.delete(hash);
    }
    return this.#lookup(hash);
  }

  async #lookup(hash: string): Promise<Principal | undefined> {
    // A disabled account's tokens, and its instances' tokens, are no one's while it stays disabled.
    const account = await this.store.accounts.findByTokenHash(hash);
    if (account) {
      this.#cache.set(hash, { kind: 'account', account, at: this.now() });
      return account.disabledAt ? undefined : { kind: 'account', account };
    }
    const instance = await this.store.instances.findByTokenHash(hash);
    if (!instance) return undefined;
    const owner = await this.store.accounts.findById(instance.accountId);
    if (!owner) return undefined;
    this.#cache.set(hash, { kind: 'instance', account: owner, instanceId: instance.id, at: this.now() });
    return owner.disabledAt ? undefined : { kind: 'instance', account: owner, instance };
  }
}

export function createAuthenticator(
  store: Store,
  adminToken: string | undefined,
  records: InstanceRecords = store.instances,
): CachingAuthenticator {
  return new CachingAuthenticator(store, adminToken, TOKEN_CACHE_TTL_MS, Date.now, records);
}

/** Resolves the presented token once per request (the rate limiter and the route guard both need it). */
export async function resolvePresented(ctx: AppContext, auth: Authenticator): Promise<PresentedState> {
  if (ctx.state.presented) return ctx.state.presented;
  const presented = presentedToken(ctx);
  if (presented === undefined) {
    ctx.state.presented = { token: undefined, tokenHash: undefined, principal: undefined };
    return ctx.state.presented;
  }
  const tokenHash = hashToken(presented.value);
  const principal = await auth.resolve(presented.value, presented.fromUrl, tokenHash);
  ctx.state.presented = { token: presented.value, tokenHash, principal };
  return ctx.state.presented;
}

/** Who calls, or the 401 of spec section 7; `headerOnly` endpoints (global, metrics) word a missing token so. */
async function authenticate(ctx: AppContext, auth: Authenticator, headerOnly = false): Promise<Principal> {
  const presented = presentedToken(ctx);
  if (presented === undefined) {
    if (headerOnly) throw new AuthError(AuthMessage.MissingHeader);
    throw new AuthError(queryToken(ctx) === undefined ? AuthMessage.Missing : AuthMessage.QueryToken);
  }
  const token = presented.value;
  const cached = ctx.state.presented;
  const principal = cached?.token === token ? cached.principal : await auth.resolve(token, presented.fromUrl);
  if (!principal) throw new AuthError(AuthMessage.Invalid);
  if (principal.kind !== 'global') checkAccountOrigin(ctx, principal.account);
  ctx.state.principal = principal;
  return principal;
}

/** Admin endpoints: the global token, from a header only. */
export function requireGlobal(auth: Authenticator): Guard {
  return guard('global', async (ctx, next) => {
    const principal = await authenticate(ctx, auth, true);
    if (principal.kind !== 'global') throw new ForbiddenError(AuthMessage.GlobalTokenRequired);
    await next();
  });
}

/** GET /metrics: METRICS_TOKEN (when set) or the global token, from a header only. */
export function requireMetricsToken(auth: Authenticator, metricsToken: string | undefined): Guard {
  const global = requireGlobal(auth);
  return guard('metrics', async (ctx, next) => {
    const token = presentedToken(ctx);
    if (token !== undefined && metricsToken !== undefined && safeEqual(token.value, metricsToken)) {
      await next();
      return;
    }
    await global(ctx, next);
  });
}

/** Account-level operations (create, delete): a TokenAccount only. */
export function requireAccount(auth: Authenticator): Guard {
  return guard('account', async (ctx, next) => {
    const principal = await authenticate(ctx, auth);
    if (principal.kind !== 'account') throw new ForbiddenError(AuthMessage.AccountTokenRequired);
    await next();
  });
}

/** A TokenAccount or a TokenInstance, with no instance in the path (instance list). */
export function requireAccountOrInstance(auth: Authenticator): Guard {
  return guard('account-or-instance', async (ctx, next) => {
    const principal = await authenticate(ctx, auth);
    if (principal.kind === 'global') throw new ForbiddenError(AuthMessage.InstanceTokenRequired);
    await next();
  });
}

/**
 * Account-scoped endpoints (account webhook): a TokenAccount acts on its own account (a different
 * `?account=` is refused), the global token on the account named by `?account=`. Sets `ctx.state.account`.
 */
export function requireAccountScope(store: Store, auth: Authenticator): Guard {
  return guard('account-scope', async (ctx, next) => {
    const principal = await authenticate(ctx, auth);
    const raw = ctx.query.account;
    const named = (Array.isArray(raw) ? raw[0] : raw)?.trim() || undefined;
    if (principal.kind === 'instance') throw new ForbiddenError(AuthMessage.AccountTokenRequired);
    if (principal.kind === 'account') {
      if (named !== undefined && named !== principal.account.name) {
        throw new ForbiddenError(AuthMessage.OtherAccountParam);
      }
      ctx.state.account = principal.account;
    } else {
      if (named === undefined) throw new ValidationError(AuthMessage.AccountParamRequired);
      const account = await store.accounts.findByName(named);
      if (!account) throw new NotFoundError(AuthMessage.AccountNotFound);
      ctx.state.account = account;
    }
    await next();
  });
}

export interface InstanceGuardOptions {
  /** The endpoint's not-found message (`Instance not found`, or `instance not found` for calls). */
  notFound?: string;
  /** Only a TokenAccount may do this (delete). */
  accountOnly?: boolean;
}

/**
 * `:instance` endpoints: resolves the path's instance within the caller's account and checks that the
 * token may operate it. Sets `ctx.state.instance`.
 */
export function requireInstance(store: Store, auth: Authenticator, options: InstanceGuardOptions = {}): Guard {
  const notFound = options.notFound ?? 'Instance not found';
  return guard(options.accountOnly ? 'instance-account' : 'instance', async (ctx, next) => {
    const principal = await authenticate(ctx, auth);
    const name = ctx.params.instance ?? '';
    if (principal.kind === 'global') throw new ForbiddenError(AuthMessage.InstanceTokenRequired);
    if (principal.kind === 'instance') {
      if (principal.instance.name !== name) {
        const sibling = await store.instances.findByName(principal.account.id, name);
        if (sibling) throw new ForbiddenError(AuthMessage.InstanceMismatch);
        throw new AuthError(AuthMessage.InvalidInstance);
      }
      if (options.accountOnly) throw new ForbiddenError(AuthMessage.AccountTokenRequired);
      withInstance(ctx, principal.instance);
      await next();
      return;
    }
    const instance = await auth.records.findByName(principal.account.id, name);
    if (!instance) {
      if (await store.instances.nameExists(name)) throw new ForbiddenError(AuthMessage.OtherAccount);
      throw new NotFoundError(notFound);
    }
    withInstance(ctx, instance);
    await next();
  });
}

/** The request's instance, and its id on every later log line of the request. */
function withInstance(ctx: AppContext, instance: InstanceRecord): void {
  ctx.state.instance = instance;
  ctx.state.bindLog({ instanceId: instance.id });
}
