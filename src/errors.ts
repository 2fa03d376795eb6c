/**
 * The few error classes of Switchboard. Each has a stable `code`, and each code one row of `ERROR_CODES`
 * (below): its HTTP status (which only the Koa edge applies, src/http/error-envelope.ts), how it is
 * rebuilt after crossing the wire, and what an Idempotency-Key does after it. Messages are what a client
 * sees, so they follow the spec verbatim.
 */

export const ErrorCode = {
  InvalidInput: 'invalid_input',
  Unauthenticated: 'unauthenticated',
  Forbidden: 'forbidden',
  NotFound: 'not_found',
  Conflict: 'conflict',
  /** An Idempotency-Key sent again with a different request. */
  IdempotencyKeyReused: 'idempotency_key_reused',
  QuotaExceeded: 'quota_exceeded',
  RateLimited: 'rate_limited',
  PayloadTooLarge: 'payload_too_large',
  Unavailable: 'unavailable',
  Fenced: 'fenced',
  NotOwner: 'not_owner',
  /** The call may have run, and its outcome cannot be known (ownership lost during it, a routing failure). */
  OutcomeUnknown: 'outcome_unknown',
  NotConnected: 'not_connected',
  /** The messaging network could not be reached (DNS, refused, proxy down): a gateway error. */
  NetworkUnreachable: 'network_unreachable',
  Timeout: 'timeout',
  Internal: 'internal',
  // The status endpoint's internal statuses (spec 7), returned as `error.code`.
  MediaDownloadFailed: 'media_download_failed',
  MediaValidationFailed: 'media_validation_failed',
  UnsupportedMediaType: 'unsupported_media_type',
  MediaUploadFailed: 'media_upload_failed',
  AudioConversionFailed: 'audio_conversion_failed',
  SendFailed: 'send_failed',
  Disconnected: 'disconnected',
  /** What the messaging network (or its driver) cannot do at all. */
  NotSupported: 'not_supported',
} as const;
export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** Every error class of the project extends this, so that `err.name` is always the class's own name. */
export class NamedError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/**
 * The node cannot start, for a reason one line explains (no stack trace): exit 78 for a configuration the
 * operator must change, 69 for a service that could not be reached in time.
 */
export class StartupError extends NamedError {
  constructor(
    message: string,
    readonly exitCode: 69 | 78,
  ) {
    super(message);
  }
}

export class AppError extends NamedError {
  constructor(
    readonly code: ErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The client sent something we refuse; nothing was changed. */
export class ValidationError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.InvalidInput, message, options);
  }
}

/** No credentials, or credentials we do not recognise. */
export class AuthError extends AppError {
  constructor(message: string) {
    super(ErrorCode.Unauthenticated, message);
  }
}

/** Recognised credentials that may not do this. */
export class ForbiddenError extends AppError {
  constructor(message: string) {
    super(ErrorCode.Forbidden, message);
  }
}

export class NotFoundError extends AppError {
  constructor(message: string) {
    super(ErrorCode.NotFound, message);
  }
}

export class ConflictError extends AppError {
  constructor(message: string) {
    super(ErrorCode.Conflict, message);
  }
}

/** The same Idempotency-Key with a different method, path or body (422: the client's mistake, nothing done). */
export class IdempotencyKeyReusedError extends AppError {
  constructor() {
    super(
      ErrorCode.IdempotencyKeyReused,
      'This Idempotency-Key was already used with a different request; use a new key for a new request',
    );
  }
}

export class QuotaExceededError extends AppError {
  constructor(message = 'Account instance quota exceeded') {
    super(ErrorCode.QuotaExceeded, message);
  }
}

export class RateLimitError extends AppError {
  constructor(message = 'Rate limit exceeded. Try again later.') {
    super(ErrorCode.RateLimited, message);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message = 'Request body too large') {
    super(ErrorCode.PayloadTooLarge, message);
  }
}

/** The driver cannot do this at all (not now, not later): the hosted product's 501. */
export class NotSupportedError extends AppError {
  constructor(message: string) {
    super(ErrorCode.NotSupported, message);
  }
}

/** A dependency (store, coordination, network) cannot serve the call now. */
export class UnavailableError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Unavailable, message, options);
  }
}

/**
 * The store (MongoDB or the SQLite file) cannot serve the call now: unreachable, locked past its busy
 * timeout, out of disk. Worth retrying; never the client's fault.
 */
export class StoreUnavailableError extends UnavailableError {
  constructor(options?: { cause?: unknown }) {
    super('store unavailable', options);
  }
}

/**
 * An instance-owned write carried an owner epoch that is no longer current: another node claimed the
 * instance (or it was deleted). The writer is not the owner any more and must stop at once.
 */
export class FencedError extends AppError {
  constructor(
    readonly instanceId: string,
    readonly epoch?: number,
  ) {
    super(ErrorCode.Fenced, `Owner epoch ${epoch ?? '(unknown)'} of instance ${instanceId} is stale`);
  }
}

/** A failure whose message the spec fixes for a 500 (for example `Failed to update settings configuration`). */
export class InternalError extends AppError {
  constructor(message: string, options?: { cause?: unknown }) {
    super(ErrorCode.Internal, message, options);
  }
}

/** This node does not (or no longer) own the instance; a router refreshes the owner and retries once. */
/** This node does not own the instance, and the call did not run here: trying again elsewhere is safe. */
export class NotOwnerError extends AppError {
  constructor(readonly instanceId: string) {
    super(ErrorCode.NotOwner, 'Instance is moving between nodes; try again');
  }
}

/**
 * The call may have run (it started before ownership was lost, or its routing failed after it may have
 * been delivered): never run again on the caller's behalf. An Idempotency-Key tells the client what happened.
 */
export class OutcomeUnknownError extends AppError {
  constructor(
    message = 'The instance moved while the request ran; its outcome is unknown',
    options?: { cause?: unknown },
  ) {
    super(ErrorCode.OutcomeUnknown, message, options);
  }
}

/** A call did not finish before its deadline. */
export class TimeoutError extends AppError {
  constructor(message = 'The instance did not answer in time') {
    super(ErrorCode.Timeout, message);
  }
}

export const NOT_CONNECTED_MESSAGE = 'Instance is not connected to WhatsApp';

/** The spec's `Instance is not connected to MsgNet`, with our network's name (400, as most endpoints answer it). */
export class NotConnectedError extends AppError {
  constructor() {
    super(ErrorCode.NotConnected, NOT_CONNECTED_MESSAGE);
  }
}

/**
 * The same failure as the endpoints whose spec answers it with 503 and the internal status
 * `disconnected` (the status post, chats by label with a refresh); the edge turns one into the other.
 */
export class DisconnectedError extends AppError {
  constructor() {
    super(ErrorCode.Disconnected, NOT_CONNECTED_MESSAGE);
  }
}

/**
 * Connecting failed because the network could not be reached at all (its host does not resolve, the
 * connection is refused, the proxy is down); the session keeps retrying in the background.
 */
export class NetworkUnreachableError extends AppError {
  constructor(cause: string) {
    super(ErrorCode.NetworkUnreachable, `could not reach WhatsApp: ${cause}`);
  }
}

const UNREACHABLE_PREFIX = 'could not reach WhatsApp: ';

export function isNotConnected(err: unknown): boolean {
  return err instanceof NotConnectedError;
}

/** A driver could not upload a message's media to the network (the status endpoint's `media_upload_failed`). */
export class MediaUploadError extends AppError {
  constructor(options?: { cause?: unknown }) {
    super(ErrorCode.MediaUploadFailed, 'Failed to upload media to WhatsApp', options);
  }
}

/** What went wrong, in a line: an error's message, or the thrown value as text. */
export function reasonOf(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * True when the error means "this node is not (or no longer) the instance's owner": stop, touch nothing,
 * let the caller find the new owner. Errors from other nodes are rebuilt as their classes, so this holds
 * for them too.
 */
export function isOwnershipLoss(err: unknown): boolean {
  return err instanceof NotOwnerError || err instanceof FencedError;
}

/** What happens to an error of one code wherever it goes. */
export interface ErrorCodeRules {
  /** The HTTP status the edge answers with (http/error-envelope.ts). */
  status: number;
  /** How it is rebuilt as its class after crossing the wire from another node; null keeps a plain AppError. */
  fromWire: ((message: string, instanceId: string) => AppError) | null;
  /**
   * What the owner does with an Idempotency-Key's record when the call it ran failed with this code
   * (actors/idempotency-records.ts): `forget` when the call surely did nothing on the network (a retry may
   * run it again), `keep` (the failure is the recorded answer, replayed to a retry) when it may have.
   */
  idempotency: 'forget' | 'keep';
}

/**
 * Every code's rules, one row each (test/unit/errors.test.ts checks that every code has every column).
 * A client's mistake is a 4xx, the network's refusal its documented status, our own failure a 5xx.
 */
export const ERROR_CODES: { readonly [C in ErrorCode]: ErrorCodeRules } = {
  [ErrorCode.InvalidInput]: { status: 400, fromWire: (m) => new ValidationError(m), idempotency: 'forget' },
  [ErrorCode.Unauthenticated]: { status: 401, fromWire: (m) => new AuthError(m), idempotency: 'forget' },
  [ErrorCode.Forbidden]: { status: 403, fromWire: (m) => new ForbiddenError(m), idempotency: 'forget' },
  [ErrorCode.NotFound]: { status: 404, fromWire: (m) => new NotFoundError(m), idempotency: 'forget' },
  [ErrorCode.Conflict]: { status: 409, fromWire: (m) => new ConflictError(m), idempotency: 'forget' },
  [ErrorCode.IdempotencyKeyReused]: {
    status: 422,
    fromWire: () => new IdempotencyKeyReusedError(),
    // Thrown before the key is begun: nothing of this request is recorded.
    idempotency: 'keep',
  },
  [ErrorCode.QuotaExceeded]: { status: 403, fromWire: (m) => new QuotaExceededError(m), idempotency: 'forget' },
  [ErrorCode.RateLimited]: { status: 429, fromWire: (m) => new RateLimitError(m), idempotency: 'forget' },
  [ErrorCode.PayloadTooLarge]: { status: 413, fromWire: (m) => new PayloadTooLargeError(m), idempotency: 'forget' },
  // Raised inside a turn (the store away after a send, say), it may follow a side effect.
  [ErrorCode.Unavailable]: { status: 503, fromWire: (m) => new UnavailableError(m), idempotency: 'keep' },
  [ErrorCode.Fenced]: { status: 503, fromWire: (_m, id) => new FencedError(id), idempotency: 'keep' },
  [ErrorCode.NotOwner]: { status: 503, fromWire: (_m, id) => new NotOwnerError(id), idempotency: 'forget' },
  [ErrorCode.OutcomeUnknown]: { status: 503, fromWire: (m) => new OutcomeUnknownError(m), idempotency: 'keep' },
  [ErrorCode.NotConnected]: { status: 400, fromWire: () => new NotConnectedError(), idempotency: 'forget' },
  [ErrorCode.NetworkUnreachable]: {
    status: 502,
    fromWire: (m) => new NetworkUnreachableError(m.replace(UNREACHABLE_PREFIX, '')),
    idempotency: 'keep',
  },
  [ErrorCode.Timeout]: { status: 504, fromWire: (m) => new TimeoutError(m), idempotency: 'keep' },
  [ErrorCode.Internal]: { status: 500, fromWire: (m) => new InternalError(m), idempotency: 'keep' },
  [ErrorCode.MediaDownloadFailed]: { status: 400, fromWire: null, idempotency: 'forget' },
  [ErrorCode.MediaValidationFailed]: { status: 400, fromWire: null, idempotency: 'forget' },
  [ErrorCode.UnsupportedMediaType]: { status: 400, fromWire: null, idempotency: 'forget' },
  [ErrorCode.MediaUploadFailed]: { status: 500, fromWire: () => new MediaUploadError(), idempotency: 'keep' },
  [ErrorCode.AudioConversionFailed]: { status: 500, fromWire: null, idempotency: 'forget' },
  [ErrorCode.SendFailed]: { status: 500, fromWire: null, idempotency: 'keep' },
  [ErrorCode.Disconnected]: { status: 503, fromWire: () => new DisconnectedError(), idempotency: 'forget' },
  [ErrorCode.NotSupported]: { status: 501, fromWire: (m) => new NotSupportedError(m), idempotency: 'forget' },
};

/** Rebuilds an error that crossed the wire from another node as its own class, keeping code and message. */
export function errorFromWire(code: string, message: string, instanceId: string): AppError {
  const known = Object.values(ErrorCode).includes(code as ErrorCode) ? (code as ErrorCode) : undefined;
  if (known === undefined) return new InternalError(message);
  return ERROR_CODES[known].fromWire?.(message, instanceId) ?? new AppError(known, message);
}

/** What the chatbot and helpdesk endpoints answer (503) when their module is off on this server (spec 7). */
export const MODULE_UNAVAILABLE = 'integration gateway not configured';
