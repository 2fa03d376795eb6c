import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * The request a piece of work runs for. Set by the HTTP edge, carried by routed calls to the owner's node
 * and into the actor's job, so that one request can be followed across nodes in the logs.
 */
const storage = new AsyncLocalStorage<{ requestId: string }>();

/** Runs `work` for `requestId`; undefined runs it for no request (never for the caller's). */
export function withRequestId<T>(requestId: string | undefined, work: () => T): T {
  return requestId === undefined ? storage.exit(work) : storage.run({ requestId }, work);
}

export function currentRequestId(): string | undefined {
  return storage.getStore()?.requestId;
}

/**
 * A pino `formatters.log`: adds the current request id to each line. The id is never bound on a child
 * logger, so a line carries the key once.
 */
export function requestIdField(object: object): object {
  const requestId = currentRequestId();
  return requestId === undefined || 'requestId' in object ? object : { ...object, requestId };
}
