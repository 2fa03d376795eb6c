import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { AccountRecord, InstanceRecord } from '../store/records.js';

/**
 * Who is calling:
 * - `global`: the operator's ADMIN_TOKEN;
 * - `account`: a TokenAccount (its whole account);
 * - `instance`: a TokenInstance (that one instance only).
 */
export type Principal =
  | { kind: 'global' }
  | { kind: 'account'; account: AccountRecord }
  | { kind: 'instance'; account: AccountRecord; instance: InstanceRecord };

/** The request's token as presented (none: all undefined), hashed and resolved once. */
export interface PresentedState {
  token: string | undefined;
  tokenHash: string | undefined;
  principal: Principal | undefined;
}

export interface AppState {
  requestId: string;
  log: Logger;
  /** A WebSocket upgrade: the one kind of request that may carry its token as `?token=` (spec section 5). */
  upgrade?: boolean;
  principal?: Principal;
  /** The presented token, its hash and what it resolved to, computed once per request. */
  presented?: PresentedState;
  /** The `:instance` of the path, resolved and authorised by `requireInstance`. */
  instance?: InstanceRecord;
  /** The account an account-scoped endpoint acts on, resolved by `requireAccountScope`. */
  account?: AccountRecord;
}

export type AppContext = ParameterizedContext<AppState>;
