import { randomUUID } from 'node:crypto';
import type { ParameterizedContext } from 'koa';
import type { Logger } from 'pino';
import type { RequestKey } from '../cluster/actor-caller.js';
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
  readonly requestId: string;
  /** The request's logger: its lines carry the request id, and the instance's once a guard has resolved it. */
  readonly log: Logger;
  /** Adds fields to every line the request logs from now on. */
  bindLog(fields: Record<string, string>): void;
  /** A WebSocket upgrade: the one kind of request that may carry its token as `?token=` (spec section 5). */
  upgrade?: boolean;
  principal?: Principal;
  /** The presented token, its hash and what it resolved to, computed once per request. */
  presented?: PresentedState;
  /** The `:instance` of the path, resolved and authorised by `requireInstance`. */
  instance?: InstanceRecord;
  /** The account an account-scoped endpoint acts on, resolved by `requireAccountScope`. */
  account?: AccountRecord;
  /** The request's Idempotency-Key, which its actor calls carry (`http/idempotency.ts`). */
  idempotency?: RequestKey;
}

export type AppContext = ParameterizedContext<AppState>;

/**
 * Koa's `ctx.state` of one request, set by the edge's first step. The logger is made at the request's
 * first line: most requests log nothing, and a pino child costs a serialisation of its fields.
 */
export class RequestState implements AppState {
  upgrade?: boolean;
  principal?: Principal;
  presented?: PresentedState;
  instance?: InstanceRecord;
  account?: AccountRecord;
  idempotency?: RequestKey;
  #log: Logger | undefined;
  readonly #bindings: Record<string, string>;

  constructor(
    readonly requestId: string,
    private readonly base: Logger,
  ) {
    this.#bindings = { requestId };
  }

  get log(): Logger {
    return (this.#log ??= this.base.child(this.#bindings));
  }

  bindLog(fields: Record<string, string>): void {
    if (this.#log) this.#log = this.#log.child(fields);
    else Object.assign(this.#bindings, fields);
  }
}

/** The request id a client may choose (`X-Request-Id`); anything else is replaced by a fresh UUID. */
const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Starts a request's state: its id (the client's when usable, echoed in `X-Request-Id`) and its logger. */
export function startRequest(ctx: ParameterizedContext, base: Logger): RequestState {
  const given = ctx.get('x-request-id');
  const state = new RequestState(REQUEST_ID.test(given) ? given : randomUUID(), base);
  ctx.state = state;
  ctx.set('X-Request-Id', state.requestId);
  return state;
}
